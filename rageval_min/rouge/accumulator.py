"""Pipeline step: the ``rouge`` command's records, item rows, mean accumulator and :func:`score_file`.

The ``rouge`` command (the family contract, ``docs/adding-a-family.md``)
    Records hold ``prediction`` and ``reference`` (a string) or ``references``
    (a list: the best target per type by F-measure, :func:`score_multi`).
    :func:`score_item` turns one record into a flat item row (``id``, or
    ``line`` when the record has no id, then ``TYPE.precision``,
    ``TYPE.recall``, ``TYPE.fmeasure``); :class:`RougeAccumulator` averages
    the rows (sequential float sums in input order, divided by the count);
    :func:`score_file` does both for a file.  Every ``TYPE.PART`` metric is
    higher-is-better; ``records`` is a count (see ``RougeAccumulator.METRICS``).
"""

from __future__ import annotations

import functools
from array import array
from functools import lru_cache
from operator import add, itemgetter

from .._contract import Accumulator, ItemRow, deferred_schema, finish, partial_requested, register_accumulator
from .._io import Problems, iter_records
from .._metrics import Input, InputField, Metric
from .._parallel import accumulate_items
from ..errors import ScoringError
from ..report import Report
from .backends import make_scorer
from .rouge_scorer import (
    FAMILY,
    _c_values,
    _parsed,
    rouge_variants,
    score,
    score_multi,
    signature,
    signature_params,
    validate_rouge_types,
)
from .scoring import Score
from .tokenizers import TOKENIZERS, _check_tokenizer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

    from .._state_schema import Schema  # imported when a state is checked (see _state_schema below)
    from .backends import ScoreFn
    from .rouge_scorer import LcsFn

__all__ = ["LINE_KEY", "RougeAccumulator", "check_record", "metric_names", "reference_json", "score_file", "score_item"]

#: Key of the 1-based line number (position in a JSON array) in an item row
#: whose record has no ``id``.
LINE_KEY = "line"

_PARTS = ("precision", "recall", "fmeasure")


def check_record(record: Mapping[str, Any]) -> Tuple[List[str], str]:
    """``(targets, prediction)`` of one input record; a bad record is a ScoringError naming the field.

    A record has ``prediction`` (a string) and either ``reference`` (a string)
    or ``references`` (a non-empty list of strings), not both.

    >>> check_record({"prediction": "a", "references": ["b", "c"]})
    (['b', 'c'], 'a')
    >>> check_record({"prediction": "a"})
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: reference: missing (give reference, a string, or references, a list)
    """
    pred = record.get("prediction")
    if not isinstance(pred, str):
        what = "missing" if "prediction" not in record else f"expected a string, got {type(pred).__name__}"
        raise ScoringError(what, field="prediction")
    if "references" in record and "reference" in record:
        raise ScoringError("give either reference or references, not both", field="references")
    if "references" in record:
        refs = record["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise ScoringError("references must be a non-empty list of strings", field="references")
        return list(refs), pred
    ref = record.get("reference")
    if not isinstance(ref, str):
        what = (
            "missing (give reference, a string, or references, a list)"
            if "reference" not in record
            else f"expected a string, got {type(ref).__name__}"
        )
        raise ScoringError(what, field="reference")
    return [ref], pred


def _type_keys(rouge_types: Sequence[str]) -> List[Tuple[str, str]]:
    """``(type as given, canonical name)`` per distinct type, in first-seen order.

    The canonical name is the type without surrounding whitespace (the
    reference accepts ``"rouge1\\n"`` as ``rouge1``); a repeated type counts once.
    """
    out: Dict[str, str] = {}
    for name in rouge_types:
        out.setdefault(name.strip(), name)
    return [(raw, key) for key, raw in out.items()]


def metric_names(rouge_types: Sequence[str]) -> List[str]:
    """The gateable names of a ``rouge`` report: ``records``, then ``TYPE.precision|recall|fmeasure``.

    The per-type names are also the metric keys of an item row.

    >>> metric_names(["rougeL"])
    ['records', 'rougeL.precision', 'rougeL.recall', 'rougeL.fmeasure']
    """
    names = validate_rouge_types(rouge_types)
    return ["records"] + [f"{key}.{part}" for _, key in _type_keys(names) for part in _PARTS]


@lru_cache(maxsize=64)
def _row_spec(rouge_types: Tuple[str, ...]) -> Tuple[Tuple[str, str, str, str], ...]:
    """``(type as given, "KEY.precision", "KEY.recall", "KEY.fmeasure")`` per :func:`_type_keys` entry."""
    return tuple((raw, key + ".precision", key + ".recall", key + ".fmeasure") for raw, key in _type_keys(rouge_types))


def _item_row(
    record: Mapping[str, Any], line: Optional[int], scores: Mapping[str, Score], keys: Sequence[Tuple[str, str]]
) -> ItemRow:
    row: ItemRow = {"id": record["id"]} if "id" in record else {LINE_KEY: line}
    for raw, key in keys:
        s = scores[raw]
        row[key + ".precision"] = s.precision
        row[key + ".recall"] = s.recall
        row[key + ".fmeasure"] = s.fmeasure
    return row


def _fast_row(
    record: Mapping[str, Any],
    line: Optional[int],
    scores: Mapping[str, Score],
    spec: Tuple[Tuple[str, str, str, str], ...],
) -> ItemRow:
    """:func:`_item_row` with the key names made once (:func:`_row_spec`)."""
    row: ItemRow = {"id": record["id"]} if "id" in record else {LINE_KEY: line}
    for raw, kp, kr, kf in spec:
        row[kp], row[kr], row[kf] = scores[raw]
    return row


@lru_cache(maxsize=8)
def _scorer(rouge_types: Tuple[str, ...], use_stemmer: bool, tokenizer: str, backend: str) -> ScoreFn:
    """The backend's scoring function, built once per process (worker processes build their own)."""
    return make_scorer(rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend)[0]


def _record_item(
    task: Tuple[Any, ...], *, rouge_types: Tuple[str, ...], use_stemmer: bool, tokenizer: str, backend: str
) -> Tuple[Optional[ItemRow], Optional[Tuple[Any, ...]]]:
    """One step of :func:`score_file` (picklable): ``(row, None)``, or ``(None, problem)`` in input order."""
    if task[0] == "reader":
        return None, task
    _, line, rec = task
    try:
        targets, prediction = check_record(rec)
    except ScoringError as exc:
        return None, ("check", exc.msg, line, exc.field)
    try:
        # The built-in engine on one reference: score()'s C path straight into the row (the
        # types were checked by score_file, the texts by check_record); None: no kernels.
        if backend == "stdlib" and tokenizer == "reference" and not use_stemmer and len(targets) == 1:
            types, keys = _values_plan(rouge_types)
            values = _c_values(types, targets[0], prediction)
            if values is not None:
                row: ItemRow = {"id": rec["id"]} if "id" in rec else {LINE_KEY: line}
                row.update(zip(keys, values))
                return row, None
        scores = _scorer(rouge_types, use_stemmer, tokenizer, backend)(targets, prediction)
    except ScoringError as exc:
        return None, ("score", exc.msg, line, exc.field)
    return _fast_row(rec, line, scores, _row_spec(rouge_types)), None


@lru_cache(maxsize=64)
def _values_plan(rouge_types: Tuple[str, ...]) -> Tuple[Tuple[Tuple[str, int], ...], Tuple[str, ...]]:
    """The parsed ``(name, n)`` of each :func:`_row_spec` entry, and the row's score keys in the
    same order: :func:`_record_item` zips the keys with the C kernel's scores (no Score objects).

    >>> _values_plan(("rougeL", "rouge2"))
    ((('rougeL', -1), ('rouge2', 2)), ('rougeL.precision', 'rougeL.recall', 'rougeL.fmeasure', \
'rouge2.precision', 'rouge2.recall', 'rouge2.fmeasure'))
    """
    n_of = dict(_parsed(rouge_types))
    spec = _row_spec(rouge_types)
    return tuple((raw, n_of[raw]) for raw, *_ in spec), tuple(k for _, kp, kr, kf in spec for k in (kp, kr, kf))


class _NoAdd:
    """An accumulator stand-in for :func:`accumulate_items`: score_file adds the rows itself."""

    def add(self, row: ItemRow) -> None:
        pass


def score_item(
    record: Mapping[str, Any],
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    lcs: Optional[LcsFn] = None,
    line: Optional[int] = None,
) -> ItemRow:
    """The item row of one record (see :func:`check_record`), scored by the built-in engine.

    A flat dict: the record's ``id`` when it has one, else its 1-based
    ``line`` number (``line=``; :data:`LINE_KEY`), then ``TYPE.precision``,
    ``TYPE.recall`` and ``TYPE.fmeasure`` for each distinct type, with the
    reference's values and types (int zeros for rougeL/rougeLsum on an empty
    side).  Several references give the best one per type (:func:`score_multi`).

    >>> score_item({"id": "a", "prediction": "a b c", "reference": "a b d"}, rouge_types=["rouge1"])
    {'id': 'a', 'rouge1.precision': 0.6666666666666666, 'rouge1.recall': 0.6666666666666666, \
'rouge1.fmeasure': 0.6666666666666666}
    >>> score_item({"prediction": "", "reference": "x"}, rouge_types=["rougeL"], line=3)
    {'line': 3, 'rougeL.precision': 0, 'rougeL.recall': 0, 'rougeL.fmeasure': 0}
    """
    names = validate_rouge_types(rouge_types)
    targets, prediction = check_record(record)
    if len(targets) == 1:
        scores = score(targets[0], prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs)
    else:
        scores = score_multi(
            targets, prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
        )
    return _item_row(record, line, scores, _type_keys(names))


def reference_json(item: Mapping[str, Any], rouge_types: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """One item row in rouge-score's nested shape, ``{TYPE: {"precision", "recall", "fmeasure"}}``.

    This is the line ``rageval-min rouge`` writes per record without ``--summary``.

    >>> reference_json({"id": 1, "rougeL.precision": 0, "rougeL.recall": 0, "rougeL.fmeasure": 0}, ["rougeL"])
    {'rougeL': {'precision': 0, 'recall': 0, 'fmeasure': 0}}
    """
    return {
        raw: {"precision": item[kp], "recall": item[kr], "fmeasure": item[kf]}
        for raw, kp, kr, kf in _row_spec(tuple(rouge_types))
    }


# ---------------------------------------------------------------- accumulator

_ALL_TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]


def _state_schema() -> Schema:
    """The rouge accumulator's state schema (built when a state is first checked)."""
    from .._state_schema import Conflict, Count, Either, Fields, Flag, Items, Maybe, Number, Schema, Size, Text, ValueAt

    return Schema(
        params=Fields(
            {
                "rouge_types": Items(Text(choices=tuple(_ALL_TYPES)), unique=True, max_len=len(_ALL_TYPES)),
                "use_stemmer": Flag(),
                "tokenizer": Text(choices=TOKENIZERS),
                # the backend's signature label: a name of --backend, rapidfuzz with its version
                "backend": Conflict(
                    Either(
                        (Text(choices=("stdlib", "rouge-score")), Text(pattern=r"rapidfuzz-[0-9][0-9A-Za-z.+]{0,40}"))
                    ),
                    "rouge-score",
                    "params.tokenizer",
                    "unicode",
                    "the rouge-score backend has no unicode tokenizer",
                ),
            }
        ),
        data=Fields(
            {
                "count": Count(),
                "sums": Items(Number(), length=Size("params.rouge_types", 3)),
                "values": Maybe(
                    Items(Items(Number(lo=0, hi=1), length=ValueAt("data.count")), length=Size("params.rouge_types", 3))
                ),
            }
        ),
    )


@register_accumulator
class RougeAccumulator(Accumulator):
    """The means of the item rows: ``{"records": n, "mean": {TYPE: {precision, recall, fmeasure}}}``.

    Each mean is a sequential float sum in input order (``0.0 + v1 + v2 ...``)
    divided by the count, as the CLI has always computed it.  A sequential
    sum cannot be merged from partial sums exactly, so the state keeps every
    value (in input order) and merging continues the left part's running sums
    over the right part's values: the state grows with the input (8 bytes per
    value in memory).  :func:`score_file`, which never merges, builds its
    accumulator with ``keep_values=False`` and runs in constant memory; such a
    state can only be the *first* part of a merge.

    ``backend`` is the backend's signature label (``stdlib``, ``rouge-score``,
    ``rapidfuzz-<version>``).
    """

    FAMILY = FAMILY
    COMMAND = "score"
    METRICS = (Metric("records", "neither", "count", "records scored"),) + tuple(
        Metric(
            f"{t}.{part}",
            "higher",
            "mean",
            f"{t} {part}, averaged over the records (rouge-score 0.1.2's value per record)",
            per_item=True,
            lo=0.0,
            hi=1.0,
        )
        for t in _ALL_TYPES
        for part in _PARTS
    )
    INPUTS = (
        Input(
            "--input",
            "prediction/reference pairs",
            "id",
            (
                InputField("id", ("string", "integer", "number", "boolean", "null"), False, "rows keyed by line"),
                InputField("prediction", ("string",), True, "an input error"),
                InputField("reference", ("string",), False, "an input error unless references is given"),
                InputField("references", ("array",), False, "an input error unless reference is given"),
            ),
        ),
    )

    STATE_SCHEMA = deferred_schema(_state_schema)  # type: ignore[assignment]

    def __init__(
        self,
        *,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        tokenizer: str = "reference",
        backend: str = "stdlib",
        keep_values: bool = True,
    ) -> None:
        names = validate_rouge_types(rouge_types)
        _check_tokenizer(tokenizer)
        if not isinstance(backend, str):
            raise ScoringError(f"backend must be a string, got {type(backend).__name__}", field="backend")
        super().__init__(rouge_types=names, use_stemmer=bool(use_stemmer), tokenizer=tokenizer, backend=backend)
        self._keys = _type_keys(names)
        self._metrics = [f"{key}.{part}" for _, key in self._keys for part in _PARTS]
        self._values_of = itemgetter(*self._metrics)  # a tuple: at least three names
        self.count = 0
        self.sums: List[float] = [0.0] * len(self._metrics)
        self.values: Optional[List["array[float]"]] = [array("d") for _ in self._metrics] if keep_values else None

    @classmethod
    def metric_names(cls, *, rouge_types: Sequence[str], **options: Any) -> List[str]:
        """The gateable names (they depend only on ``rouge_types``)."""
        return metric_names(rouge_types)

    def add(self, item: ItemRow) -> None:
        self.count += 1
        sums = self.sums
        values = self.values
        if values is None:  # the same additions, in C
            self.sums = list(map(add, sums, self._values_of(item)))
            return
        for i, name in enumerate(self._metrics):
            v = item[name]
            sums[i] += v
            if values is not None:
                values[i].append(v)

    def _data(self) -> Dict[str, Any]:
        return {
            "count": self.count,
            "sums": list(self.sums),
            "values": None if self.values is None else [list(v) for v in self.values],
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        sums = [float(s) for s in data["sums"]]
        values = data["values"]
        if len(sums) != len(self._metrics) or (values is not None and len(values) != len(self._metrics)):
            raise ValueError("the state does not match the rouge types")
        self.count = int(data["count"])
        self.sums = sums
        self.values = None if values is None else [array("d", map(float, v)) for v in values]

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, RougeAccumulator)
        if other.values is None:
            raise ScoringError("a rouge state that kept no values (keep_values=False) can only be the first part")
        for i, vals in enumerate(other.values):
            total = self.sums[i]
            for v in vals:
                total += v
            self.sums[i] = total
            if self.values is not None:
                self.values[i].extend(vals)
        self.count += other.count

    def finalize(self) -> Report:
        n = self.count
        if not n:
            raise ScoringError("no records to average")
        p = self.params
        means: Dict[str, Any] = {}
        metrics: Dict[str, Any] = {"records": n}
        for j, (raw, key) in enumerate(self._keys):
            sums = self.sums[3 * j : 3 * j + 3]
            means[raw] = {part: s / n for part, s in zip(_PARTS, sums)}
            for part, s in zip(_PARTS, sums):
                metrics[f"{key}.{part}"] = s / n
        sig = signature(
            variants=rouge_variants(tokenizer=p["tokenizer"]),
            params=signature_params(
                rouge_types=p["rouge_types"],
                use_stemmer=p["use_stemmer"],
                tokenizer=p["tokenizer"],
                backend=p["backend"],
            ),
        )
        return Report(
            family=FAMILY,
            signature=sig,
            result={"records": n, "mean": means},
            metrics=metrics,
            diagnostics=self.notes(),
        )


# ------------------------------------------------------------------ the file


def score_file(
    path: str,
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    backend: str = "stdlib",
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``rouge`` command: score every record of ``path`` (JSONL, JSON, CSV or TSV) into a Report.

    ``on_item`` receives each item row (see :func:`score_item`) in input order.
    Bad records are reported together (file, line and field) after the file
    is read; after the first bad record nothing more is scored.  A file
    without a valid record is an input error.  ``backend`` is one of
    :data:`BACKENDS` (see :func:`make_scorer`); its label is in the signature.
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    names = validate_rouge_types(rouge_types)
    _, label = make_scorer(names, use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend)
    # A state --emit-partial writes must keep its values to merge exactly as a later shard.
    acc = RougeAccumulator(
        rouge_types=names,
        use_stemmer=use_stemmer,
        tokenizer=tokenizer,
        backend=label,
        keep_values=partial_requested(),
    )
    problems = Problems()
    item = functools.partial(
        _record_item, rouge_types=tuple(names), use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend
    )

    def records() -> Iterator[Tuple[Any, ...]]:
        try:
            for line, rec in iter_records(path):
                yield ("record", line, rec)
        except ScoringError as exc:  # the reader's own problems (bad JSON, not an object, ...)
            yield ("reader", exc)

    def outcome(extra: Tuple[Any, ...]) -> None:
        # Problems are handled here, in input order, exactly as one pass does: after the first
        # problem, records are still checked but no longer scored, and reading stops at the limit.
        kind = extra[0]
        if kind == "reader":
            if not problems:
                raise extra[1]
            problems.add_error(extra[1])
        elif kind == "check" or (kind == "score" and not problems):
            problems.add(extra[1], path=path, line=extra[2], field=extra[3])
        if problems.full:
            problems.raise_if_any()

    def collect(row: ItemRow) -> None:
        if not problems.count:
            if on_item is not None:
                on_item(row)
            acc.add(row)

    accumulate_items(_NoAdd(), item, records(), on_item=collect, on_result=outcome)
    problems.raise_if_any()
    if not acc.count:
        raise ScoringError("holds no records to score", path=path)
    return finish(acc)


#: rouge has no reference-specific report format (the per-pair lines are not a report).
REPORT_FORMATS: Dict[str, Any] = {}
