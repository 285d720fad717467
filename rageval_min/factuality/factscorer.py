"""Mirrors shmsw25/FActScore@f28272d:factscore/factscorer.py: ``FactScorer.get_score`` from per-fact labels.

``factuality factscore`` reads FActScore's labelled data (``annotations`` ->
``human-atomic-facts[*].label``) or ``{"labels": [...]}`` lines, scores each
response as ``#S / #facts`` with the length penalty, and averages as numpy does
(see :func:`factscore`).  The same labelled files feed the SAFE-vs-human study
(:func:`human_label_counts`, used by ``correlation``).
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
from .._state_schema import Count, Fields, Items, Maybe, Schema, Text, ValueAt
from .._state_schema import Number as FiniteNumber
from .._stats import np_mean
from ..errors import ScoringError
from ..report import Report
from ._common import (
    COMMAND_VARIANTS,
    FAMILY,
    Number,
    _clean,
    _nan_none,
    _no_valid,
    _shard,
    check_variants,
    record_name,
    signature,
)
from .bootstrap import STATE_PARAMS as BOOTSTRAP_STATE_PARAMS
from .bootstrap import Bootstrap, _ci_dict, check_bootstrap


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
    METRICS = (
        Metric(
            "score",
            "higher",
            "mean",
            "FActScore: #S / #facts times the length penalty (report: mean over responders)",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "init_score",
            "higher",
            "mean",
            "FActScore without the length penalty (only with gamma)",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("responded", "neither", "outcome", "1 unless the response abstained (no facts)", True),
        Metric("num_facts", "neither", "count", "facts of the response", True),
        Metric("respond_ratio", "neither", "rate", "responses that did not abstain / responses", lo=0.0, hi=1.0),
        Metric("num_facts_per_response", "neither", "mean", "mean fact count over the responding responses"),
        Metric("num_responses", "neither", "count", "responses read"),
        Metric("num_responding", "neither", "count", "responses that did not abstain"),
        Metric("score_ci_low", "higher", "statistic", "lower bound of the bootstrap interval of score", lo=0.0, hi=1.0),
        Metric(
            "score_ci_high", "higher", "statistic", "upper bound of the bootstrap interval of score", lo=0.0, hi=1.0
        ),
    )
    INPUTS = (
        Input(
            "--input",
            'labelled responses: FActScore\'s labelled data, or {"labels": [...]} lines',
            "id",
            (
                InputField("id", ("string", "integer"), False, "named by topic, else by path:line"),
                InputField("topic", ("string",), False, "named by path:line"),
                InputField("labels", ("array", "null"), False, "read from annotations; null: abstained"),
                InputField(
                    "annotations", ("array", "null"), False, "without labels either: an input error; null: abstained"
                ),
                InputField("annotations[].human-atomic-facts", ("array", "null"), False, "the sentence has no facts"),
                InputField(
                    "annotations[].human-atomic-facts[].label", ("string",), True, "an input error (S, NS or IR)"
                ),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "gamma": FiniteNumber(lo=0),
                **BOOTSTRAP_STATE_PARAMS,
                "variants": Items(Text(choices=COMMAND_VARIANTS["factscore"]), unique=True),
            }
        ),
        data=Fields(
            {
                "n": Count(),
                "facts": Count(),
                "scores": Items(Maybe(FiniteNumber(lo=0, hi=1)), max_len=ValueAt("data.n")),
                "init_scores": Items(Maybe(FiniteNumber(lo=0, hi=1)), max_len=ValueAt("data.n")),
            }
        ),
    )

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
        ci = Bootstrap.of(p).interval(self.scores, self.with_ci)
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
            params=[("gamma", gamma), ("score", labels)] + Bootstrap.of(p).signature_params(),
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
