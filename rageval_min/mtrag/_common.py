"""Pipeline step: what every mtrag step shares (names, variants, records, item rows, means, signature).

Upstream: IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation (``run_algorithmic.py``,
``judge_wrapper.py``, ``judge_utils.py``, ``run_generation_eval.py``: the pipeline order).
The steps are ``run_algorithmic.py``, ``judge_wrapper.py`` (the judges' parsers and the judge
step's rows), ``conditioning.py``, ``summarize.py``; their file-level functions are ``files.py``;
the judge prompts and calls ``judge.py``; the CLI (``rageval-min mtrag ...``) ``cli.py``.

Canonical metric names (identical in the API, the CLI and the output records)::

    Recall  RougeL_stemFalse  BertscoreP  BertscoreR  BertKPrec  Extractiveness_RougeL
    Length  RB_agg  idk_eval  underspecified_eval  RB_llm  RL_F
    RL_F_idk_underspecified  RB_llm_idk_underspecified  RB_agg_idk_underspecified   (default)
    RL_F_idk  RB_llm_idk  RB_agg_idk                                              (paper_idk)

Every output value is a list: one entry per target for ``Recall``, ``RougeL_stemFalse``,
``BertscoreP``, ``BertscoreR`` and ``Length``; one per passage for ``BertKPrec`` and
``Extractiveness_RougeL``; ``[x]`` for the rest.  The reference creates a metric's list inside
its loop over targets (passages), so with ``targets == []`` no per-target key and no ``RB_agg``
is written, and with no passages no per-passage key.

The scoring commands follow the family contract (``docs/adding-a-family.md``): per command an
item scorer (``algorithmic_item``, ``condition_item``, ``judge_item``; ``summarize`` rows come
from ``summarize_files``), a registered accumulator with exact merges (means are exactly
rounded sums, :class:`ExactMean`, so any partition gives the same bytes) and a file-level
function with an ``on_item`` callback.

Variants (opt-in, named in the signature): ``rb_agg_unguarded``, ``paper_idk``,
``answerability_alias``, ``unicode_tokens``.
"""

import math
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union, cast

from .._contract import Accumulator, ItemRow
from .._metrics import InputField, Metric
from .._numbers import as_float
from .._signature import make_signature
from .._state_schema import Count, Either, Items, Maybe, OneOf, Row, Text
from .._state_schema import Number as FiniteNumber
from ..errors import ScoringError
from ..report import Report

__all__ = [
    "ALGORITHMIC_METRICS",
    "BertScorer",
    "CONDITIONED_METRICS",
    "ExactMean",
    "FAMILY",
    "GroupMean",
    "REFERENCE",
    "RecordResult",
    "STEP_VARIANTS",
    "VARIANTS",
    "answerability_group",
    "answerability_of",
    "check_variants",
    "is_number",
    "record_id",
    "record_texts",
    "signature",
]

FAMILY = "mtrag"
REFERENCE = "IBM/mt-rag-benchmark@cc5b1d4"
VARIANTS = ("rb_agg_unguarded", "paper_idk", "answerability_alias", "unicode_tokens")

#: The variants that apply to each command.
STEP_VARIANTS = {
    "algorithmic": ("rb_agg_unguarded", "unicode_tokens"),
    "condition": ("paper_idk", "answerability_alias"),
    "summarize": ("answerability_alias",),
    "judge": (),
}

Number = Union[int, float]

#: ``scorer(prediction, reference) -> (precision, recall)``, the rescaled BERTScore of the
#: prediction (candidate) against one reference string.  The reference makes one call per
#: target (P and R) and one per passage (P only).  The bertscore extra will provide one.
BertScorer = Callable[[str, str], Tuple[float, float]]

#: Metrics written by the algorithmic step, in the reference's ``config.yaml`` order.
ALGORITHMIC_METRICS = (
    "Recall",
    "RougeL_stemFalse",
    "BertscoreP",
    "BertscoreR",
    "BertKPrec",
    "Extractiveness_RougeL",
    "Length",
    "RB_agg",
)

#: ``records``, in every step's report but summarize's.
RECORDS_METRIC = Metric("records", "neither", "count", "records read and written")

#: Input fields every step reads the same way (the item row's ``task_id``, ``group`` and ``model``).
TASK_ID_FIELD = InputField(
    "task_id", ("string", "integer"), False, "the row's task_id is null; messages name file:line"
)
ANSWERABILITY_FIELDS = (
    InputField("answerability", ("array", "string"), False, "conditioned as answerable; group Unknown"),
    InputField("Answerability", ("array", "string"), False, "read only with variant answerability_alias"),
)
MODEL_FIELD = InputField("model_id", ("string", "integer", "number", "null"), False, "the row's model is null")

#: Metrics that IDK conditioning applies to, in the reference's order.
CONDITIONED_METRICS = ("RL_F", "RB_llm", "RB_agg")


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a :class:`ScoringError`.

    >>> check_variants(["paper_idk", "paper_idk"])
    ('paper_idk',)
    """
    if variants == ():  # the common case, already checked
        return ()
    names = tuple(sorted(set(variants)))
    for name in names:
        if name not in VARIANTS:
            raise ScoringError(f"unknown mtrag variant {name!r} (known: {', '.join(VARIANTS)})", field="variant")
    return names


_check_variants = check_variants


def _tokenizer(variants: Sequence[str]) -> str:
    return "unicode" if "unicode_tokens" in variants else "reference"


def is_number(v: Any) -> bool:
    """An int or float that is not a bool (NaN included)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_is_number = is_number


def answerability_of(record: Dict[str, Any], *, alias: bool = False) -> Optional[str]:
    """``answerability[0]`` of an input record, ``None`` when missing, empty or not a list.

    Only the lowercase key is read (the 2024 files use ``Answerability`` and are therefore
    conditioned as answerable by the reference); ``alias=True`` (variant
    ``answerability_alias``) reads ``Answerability`` when the lowercase key is absent.
    A plain string is accepted as a one-element value.
    """
    if "answerability" in record:
        value = record["answerability"]
    elif alias:
        value = record.get("Answerability")
    else:
        value = None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        first = value[0]
        return first if isinstance(first, str) else None
    return None


class RecordResult(NamedTuple):
    """A record with its ``metrics`` filled in, and diagnostics naming the record."""

    record: Dict[str, Any]
    diagnostics: List[str]


def record_id(record: Dict[str, Any], fallback: Optional[str]) -> str:
    """``task_id=<id>`` for messages, or ``fallback`` when the record has no usable task_id."""
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        return f"task_id={task_id}"
    return fallback or "record"


_record_id = record_id


def record_texts(record: Dict[str, Any], key: str, rid: str, *, required: bool) -> Optional[List[str]]:
    """The ``text`` of every element of ``record[key]`` (``targets``, ``contexts``, ...); None when absent."""
    return _texts(record, key, rid, required=required)


def _texts(record: Dict[str, Any], key: str, rid: str, *, required: bool) -> Optional[List[str]]:
    value = record.get(key)
    if value is None:
        if required:
            raise ScoringError(f"missing {key!r}", record=rid, field=key)
        return None
    if not isinstance(value, list):
        raise ScoringError(f"{key!r} must be a list", record=rid, field=key)
    found = [item.get("text") if type(item) is dict else None for item in value]  # the common case
    if all(type(text) is str for text in found):
        return cast(List[str], found)
    texts: List[str] = []
    for i, item in enumerate(value):
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text, str):
            raise ScoringError("text must be a string", record=rid, field=f"{key}[{i}].text")
        texts.append(text)
    return texts


#: Answerability labels and their summary group names, in output order.
GROUPS = (
    ("ANSWERABLE", "Answerable"),
    ("PARTIAL", "Partial"),
    ("UNANSWERABLE", "Unanswerable"),
    ("UNDERSPECIFIED", "Underspecified"),
    ("CONVERSATIONAL", "Conversational"),
)
_GROUP_NAME = dict(GROUPS)
#: Groups that the paper's "all" column leaves out.
EXCLUDED_FROM_ALL = ("Conversational",)


def answerability_group(label: Optional[str]) -> str:
    """Summary group of an answerability label; anything unknown or missing is ``Unknown``
    (counted in ``all``, like the reference's conditioning treats it as answerable)."""
    if label is None:
        return "Unknown"
    return _GROUP_NAME.get(label.upper(), "Unknown")


class GroupMean(NamedTuple):
    """Mean of one metric over one group: ``n`` numeric values, ``mean`` (``None`` if n=0),
    ``skipped`` non-numeric values (null, ``"unknown"``) left out of the mean."""

    n: int
    mean: Optional[float]
    skipped: int


class ExactMean:
    """Running mean in constant memory with an exactly rounded sum.

    Keeps Shewchuk's non-overlapping partials (the algorithm behind ``math.fsum``; the
    list stays a few entries long), so :attr:`mean` equals
    ``math.fsum(values) / n`` whatever the order or number of values.
    Non-numeric values (None, NaN, strings) are counted in :attr:`skipped`.

    >>> m = ExactMean()
    >>> for v in [0.1] * 10 + [None]:
    ...     m.add(v)
    >>> m.n, m.mean, m.skipped
    (10, 0.1, 1)
    """

    __slots__ = ("partials", "n", "skipped")

    def __init__(self) -> None:
        self.partials: List[float] = []
        self.n = 0
        self.skipped = 0

    def add(self, value: Any) -> None:
        if type(value) is float:  # the common case, without the general checks below
            if math.isfinite(value):
                self.n += 1
                self._add_exact(value)
            else:
                self.skipped += 1
            return
        if not _is_number(value) or not math.isfinite(as_float(value)):  # 401 digits: an input error
            self.skipped += 1
            return
        self.n += 1
        self._add_exact(float(value))

    def merge(self, other: "ExactMean") -> None:
        """Fold in ``other`` exactly (its partials are added one by one, so the sum stays exact)."""
        for p in other.partials:
            self._add_exact(p)
        self.n += other.n
        self.skipped += other.skipped

    def data(self) -> List[Any]:
        """``[partials, n, skipped]`` as plain JSON data (floats round-trip exactly)."""
        return [list(self.partials), self.n, self.skipped]

    @classmethod
    def from_data(cls, data: Sequence[Any]) -> "ExactMean":
        m = cls()
        m.partials = [float(p) for p in data[0]]
        m.n = int(data[1])
        m.skipped = int(data[2])
        return m

    def _add_exact(self, x: float) -> None:
        i = 0
        partials = self.partials
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def mean(self) -> Optional[float]:
        return math.fsum(self.partials) / self.n if self.n else None

    def result(self) -> GroupMean:
        return GroupMean(self.n, self.mean, self.skipped)


#: The plain fields after the metrics of an algorithmic / condition item row.
ROW_FIELDS = ("group", "model", "non_numeric")


def _task_id(record: Mapping[str, Any]) -> Optional[str]:
    task_id = record.get("task_id")
    if isinstance(task_id, str):
        return task_id
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        return str(task_id)
    return None


def _model(record: Mapping[str, Any]) -> Optional[str]:
    model = record.get("model_id")
    return None if model is None else str(model)


def _metric_row(
    record: Mapping[str, Any], values: Mapping[str, Any], names: Sequence[str], *, alias: bool = False
) -> ItemRow:
    """``task_id``, each of ``names`` (a finite number or None), ``group``, ``model``, ``non_numeric``.

    A metric the record lacks is None; one it has with no numeric value (null,
    NaN, a string) is None *and* named in ``non_numeric``, because the reports
    count it (its mean then shows as null) where an absent one is left out.
    """
    row: ItemRow = {"task_id": _task_id(record)}
    non_numeric: List[str] = []
    for name in names:
        if name not in values:
            row[name] = None
            continue
        value = values[name]
        if type(value) is float:
            ok = math.isfinite(value)
        else:
            ok = is_number(value) and math.isfinite(as_float(value, field=f"metrics.{name}"))  # 401 digits: an error
        if ok:
            row[name] = value
        else:
            row[name] = None
            non_numeric.append(name)
    row["group"] = answerability_group(answerability_of(record if type(record) is dict else dict(record), alias=alias))
    row["model"] = _model(record)
    row["non_numeric"] = non_numeric
    return row


def _add_row_means(means: Mapping[str, ExactMean], item: ItemRow) -> None:
    skipped = item.get("non_numeric") or ()
    for name, mean in means.items():
        value = item.get(name)
        if value is not None:
            mean.add(value)
        elif name in skipped:
            mean.add(None)


def _means_data(means: Mapping[str, ExactMean]) -> Dict[str, Any]:
    return {name: m.data() for name, m in means.items()}


def _means_report(
    n: int, output: Optional[str], means: Mapping[str, ExactMean]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The ``result`` payload and the gateable metrics of a streamed step (a metric no record had is left out)."""
    present = {k: v for k, v in means.items() if v.n or v.skipped}
    result = {
        "records": n,
        "output": output,
        "means": {k: v.mean for k, v in present.items()},
        "counts": {k: v.n for k, v in present.items()},
    }
    metrics: Dict[str, Any] = {"records": n}
    metrics.update((k, v.mean) for k, v in present.items())
    return result, metrics


def exact_mean_state(at_most: Optional[str] = None) -> Row:
    """The state of one :class:`ExactMean` (``[partials, n, skipped]``), ``n`` at most the count at
    path ``at_most``.  Partials are finite and far from overflow, so that their sum is finite too."""
    return Row((Items(FiniteNumber(lo=-1e300, hi=1e300), max_len=1000), Count(at_most=at_most), Count(at_most=at_most)))


#: The ``--records`` path of a state (``None``: not written).
OUTPUT_STATE = Maybe(Text())

#: The signature label of the LCS backend: ``stdlib`` or ``rapidfuzz-<version>`` (what ran).
BACKEND_STATE = Either((OneOf(("stdlib",)), Text(pattern=r"rapidfuzz-[0-9][0-9A-Za-z.+]{0,40}")))


class _MeansAccumulator(Accumulator):
    """The state the algorithmic, condition and judge steps share: a record count and one
    :class:`ExactMean` per metric (a subclass fills ``self.means`` in ``__init__``)."""

    #: ``output`` is the ``--records`` file of the shard: shards that wrote different files merge
    LOCAL_PARAMS = ("output",)
    records: int
    means: Dict[str, ExactMean]

    def _data(self) -> Dict[str, Any]:
        return {"records": self.records, "means": _means_data(self.means)}

    def _load(self, data: Mapping[str, Any]) -> None:
        names = set(data["means"])
        for name in sorted(names ^ set(self.means)):  # the means are those of the params, no more, no less
            problem = "is missing" if name in self.means else f"is not a metric of these {self.COMMAND} params"
            raise ScoringError(problem, field=f"state.data.means.{name}")
        self.records = int(data["records"])
        self.means = {name: ExactMean.from_data(data["means"][name]) for name in self.means}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, type(self))
        self.records += other.records
        for name, mean in self.means.items():
            mean.merge(other.means[name])

    def add(self, item: ItemRow) -> None:
        self.records += 1
        _add_row_means(self.means, item)

    def _means_final(self, params: Sequence[Tuple[str, object]]) -> Report:
        """The report of the algorithmic and condition steps (their signature ``params``)."""
        result, metrics = _means_report(self.records, self.params["output"], self.means)
        return Report(
            family=FAMILY,
            signature=signature(variants=self.params["variants"], params=params),
            result=result,
            metrics=metrics,
            diagnostics=self.notes(),
        )


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature of an mtrag result (``params`` in the command's fixed order).

    >>> signature(params=[("step", "summarize")])
    'rageval_min:...|family=mtrag|ref=IBM/mt-rag-benchmark@cc5b1d4|variants=none|step=summarize'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)
