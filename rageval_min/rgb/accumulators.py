"""Pipeline step: the counters behind ``rgb score`` and ``rgb judge`` (the family contract).

Item rows and accumulators (the family contract, ``docs/adding-a-family.md``): one input
record gives one item row (:func:`~rageval_min.rgb.label_row`,
:func:`~rageval_min.rgb.judged_row`, :func:`~rageval_min.rgb.skipped_row`): ``id``,
``label``, then 0/1 outcomes under the names of the rates they make (``all_rate``,
``fact_check_rate``, ``correct_rate``, ``reject_rate``) plus ``correct`` and ``rejected``;
a record the reference drops has every outcome ``None`` and ``skipped`` set.
:class:`ScoreAccumulator` (``rgb score``) and :class:`JudgeAccumulator` (``rgb judge``) add
integer counters, so merging any partition is exact.  The score objects they form are
``chen700564/RGB@65ec39e:evalue.py``'s (:class:`~rageval_min.rgb.Scores`, also given by
:func:`score`), ``reject_evalue.py``'s and ``fact_evalue.py``'s.
"""

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from .._contract import Accumulator, ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._state_schema import Count, Fields, Flag, Items, Maybe, Row, Schema, Text
from .._state_schema import Number as FiniteNumber
from ..errors import ScoringError
from ..judges.stats_metrics import TRUST_METRICS
from ..report import Report
from ._common import (
    FAMILY,
    JUDGED,
    VARIANTS,
    Number,
    _is_fact,
    _is_number,
    _who,
    check_variants,
    result_metrics,
    signature,
)
from .evalue import Scores, _checked_factlabel, _checked_record, label_row
from .fact_evalue import FactJudgeScores
from .reject_evalue import RejectJudgeScores

__all__ = [
    "JudgeAccumulator",
    "ScoreAccumulator",
    "score",
]

_SCORE_KEYS = ("all_rate", "noise_rate", "tt", "nums")
_FACT_KEYS = ("fact_check_rate", "correct_rate", "fact_tt", "correct_tt")
_REJECT_JUDGED_KEYS = ("reject_rate", "all_rate", "tt", "rejecttt", "nums")
_FACT_JUDGED_KEYS = ("reject_rate", "all_rate", "correct_rate", "tt", "rejecttt", "correct_tt", "nums", "noise_rate")


def _rate(name: str, meaning: str, per_item: bool = True) -> Metric:
    return Metric(name, "higher", "rate", meaning, per_item=per_item, lo=0.0, hi=1.0)


#: Every metric of ``rgb score`` (with or without ``--judged``): the score objects' keys and the item rows' outcomes.
_SCORE_METRICS: Tuple[Metric, ...] = (
    _rate("all_rate", "tt / nums: correct answers (at noise 1: rejected or correct; judged: correct)"),
    Metric(
        "noise_rate", "neither", "statistic", "the run's noise rate, written back as the reference does", lo=0.0, hi=1.0
    ),
    Metric("tt", "higher", "count", "records counted in all_rate's numerator"),
    Metric("nums", "neither", "count", "records scored (the ones the reference drops are not counted)"),
    _rate("fact_check_rate", "_fact sets: fact_tt / nums, answers flagging factual errors (error detection)"),
    _rate("correct_rate", "flagged records that are also correct / flagged (int 0 when none was flagged)"),
    Metric("fact_tt", "higher", "count", "_fact sets: records whose answer flags factual errors"),
    Metric("correct_tt", "higher", "count", "flagged records counted as corrected"),
    _rate("reject_rate", "judged: rejecttt / nums, records the judge reads as rejected (reject) or detecting (fact)"),
    Metric("rejecttt", "higher", "count", "judged: records the judge reads as rejected (reject) or detecting (fact)"),
    Metric("correct", "higher", "outcome", "0 not in label and 1 in label: every answer element found", per_item=True),
    Metric(
        "rejected",
        "neither",
        "outcome",
        "label[0] == -1: the model said the information is insufficient (good only at noise 1)",
        per_item=True,
    ),
)
_JUDGED_METRIC_NAMES = set(_REJECT_JUDGED_KEYS) | set(_FACT_JUDGED_KEYS) | {"correct"}
#: The judge runner's statistics, added to ``rgb judge``'s metrics (``JudgeStats.as_metrics``).
_JUDGE_STATS = (
    Metric("judge_calls", "neither", "count", "prompts sent to the judge (retries not counted again)"),
    Metric("judge_cache_hits", "neither", "count", "prompts answered from the judge cache"),
    Metric("judge_failures", "lower", "count", "judge calls that still failed after the retries"),
    Metric("judge_unparseable", "lower", "count", "judge answers the parser rejected"),
) + TRUST_METRICS

#: The fields of a prediction record that the labelling reads.
_PREDICTION_FIELDS = (
    InputField("id", ("string", "integer"), False, "not needed: diagnostics name the line"),
    InputField("prediction", ("string",), True, "an input error naming the line (nothing to label)"),
    InputField("ans", ("string", "array"), False, "'answer' is read instead; neither is an input error"),
    InputField("answer", ("string", "array"), False, "read only when 'ans' is missing"),
    InputField("noise_rate", ("number",), False, "the file name's noise rate (or --noise-rate)"),
)
#: The fields ``rgb score --use-labels`` / ``--judged`` read back from ``rgb label`` / ``rgb judge`` records.
_STORED_FIELDS = (
    InputField("label", ("array", "null"), False, "the prediction is labelled (--use-labels); null: dropped earlier"),
    InputField("factlabel", ("integer",), False, "0, except on _fact sets with a stored label: an input error"),
    InputField("rgb_skipped", ("string",), False, "the skip reason reads 'label is null'"),
    InputField("evaluation", ("string",), False, "with --judged: an input error (the stored judge output)"),
    InputField("judge_template", ("string",), False, "the judged signature names the template 'unrecorded'"),
)


#: What a score (and judged) state's ``data`` holds: the counts, bounded by one another.
_SCORE_STATE_DATA = Fields(
    {
        "nums": Count(),
        "tt": Count(at_most="data.nums"),
        "flagged": Count(at_most="data.nums"),
        "flagged_correct": Count(at_most="data.flagged"),
        "skipped": Items(Text()),
        "empty_noise1": Items(Row((Count(at_most="data.nums"), Maybe(Text())))),
        "templates": Items(Text(max_len=10_000), unique=True),
    }
)

#: The params a score and a judged state share (the judged one adds its judge model).
_SCORE_STATE_PARAMS = {
    "dataset": Text(max_len=1000),
    "noise_rate": FiniteNumber(lo=0, hi=1),
    "use_labels": Flag(),
    "variants": Items(Text(choices=VARIANTS), unique=True),
}


@register_accumulator
class ScoreAccumulator(Accumulator):
    """``rgb score``: integer counters of the item rows; the rates are formed once, in :meth:`finalize`.

    With ``judged=None`` the rows are :func:`label_row` rows and the report is the
    reference's ``_result.json`` object (:class:`Scores`); with ``judged`` ``reject`` or
    ``fact`` they are :func:`judged_row` rows and the report is :class:`RejectJudgeScores`
    or :class:`FactJudgeScores`.  Merging adds the counters and concatenates the kept
    diagnostics (the records the reference drops and ``label == []`` at noise 1, whose
    ``record N`` positions are shifted by the counts before them), so it is exact for any
    partition.  The judged signature names the sorted set of the records' template ids.
    """

    FAMILY = "rgb"
    COMMAND = "score"
    #: No rate names item fields as numerator/denominator (``RATES`` stays empty, as before the
    #: declarations): each rate's interval comes from the same-named 0/1 item field.
    METRICS = _SCORE_METRICS
    INPUTS = (Input("--input", "model predictions (JSON Lines)", "id", _PREDICTION_FIELDS + _STORED_FIELDS),)

    STATE_SCHEMA = Schema(
        params=Fields({**_SCORE_STATE_PARAMS, "judged": Maybe(Text(choices=JUDGED))}),
        data=_SCORE_STATE_DATA,
    )

    def __init__(
        self,
        *,
        dataset: str,
        noise_rate: Number,
        use_labels: bool = False,
        variants: Sequence[str] = (),
        judged: Optional[str] = None,
    ) -> None:
        if not _is_number(noise_rate):
            raise ScoringError(f"noise_rate must be a number, got {noise_rate!r}", field="noise_rate")
        if judged is not None and judged not in JUDGED:
            raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
        super().__init__(
            dataset=dataset,
            noise_rate=noise_rate,
            use_labels=use_labels,
            variants=list(check_variants(variants)),
            judged=judged,
        )
        self.dataset = dataset
        self.noise_rate = noise_rate
        self.use_labels = use_labels
        self.variants = tuple(self.params["variants"])
        self.judged = judged
        self.nums = self.tt = self.flagged = self.flagged_correct = 0
        #: records the reference drops (file-level notes naming file and line), input order
        self.skipped: List[str] = []
        #: ``[local position, "id=..." or None]`` of ``label == []`` at noise 1
        self.empty_noise1: List[List[Any]] = []
        self.templates: Set[str] = set()

    def _signature_params(self) -> List[Tuple[str, object]]:
        params: List[Tuple[str, object]] = [
            ("dataset", self.dataset),
            ("noise_rate", self.noise_rate),
            ("use_labels", self.use_labels),
        ]
        if self.judged:
            ids = sorted(self.templates)
            params += [("judged", self.judged), ("judge_template", "+".join(ids) if ids else "unrecorded")]
        return params

    @classmethod
    def metric_names(cls, *, dataset: str = "", judged: Optional[str] = None, **options: Any) -> List[str]:
        """The gateable names of the report (they depend only on the options)."""
        if judged == "reject":
            return list(_REJECT_JUDGED_KEYS)
        if judged == "fact":
            return list(_FACT_JUDGED_KEYS)
        return list(_SCORE_KEYS) + (list(_FACT_KEYS) if _is_fact(dataset) else [])

    def skip(self, note: str) -> None:
        """Record a dropped record's diagnostic (kept in full, in input order)."""
        self.skipped.append(note)

    def add(self, item: ItemRow) -> None:
        if item.get("skipped") is not None:
            return
        self.nums += 1
        if self.judged:
            self.tt += item["correct"]
            if item["reject_rate"]:
                self.flagged += 1
                self.flagged_correct += item["correct"]
            self.templates.add(str(item["judge_template"]))
            return
        self.tt += item["all_rate"]
        if self.noise_rate == 1 and not item["label"]:
            rid = item.get("id")
            self.empty_noise1.append([self.nums, None if rid is None else _who(rid)])
        if item["fact_check_rate"]:
            self.flagged += 1
            self.flagged_correct += item["correct_rate"]

    def _data(self) -> Dict[str, Any]:
        return {
            "nums": self.nums,
            "tt": self.tt,
            "flagged": self.flagged,
            "flagged_correct": self.flagged_correct,
            "skipped": list(self.skipped),
            "empty_noise1": [list(e) for e in self.empty_noise1],
            "templates": sorted(self.templates),
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.nums = int(data["nums"])
        self.tt = int(data["tt"])
        self.flagged = int(data["flagged"])
        self.flagged_correct = int(data["flagged_correct"])
        self.skipped = [str(n) for n in data["skipped"]]
        self.empty_noise1 = [[int(p), None if w is None else str(w)] for p, w in data["empty_noise1"]]
        self.templates = {str(t) for t in data["templates"]}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, ScoreAccumulator)
        self.empty_noise1 += [[p + self.nums, w] for p, w in other.empty_noise1]
        self.nums += other.nums
        self.tt += other.tt
        self.flagged += other.flagged
        self.flagged_correct += other.flagged_correct
        self.skipped += other.skipped
        self.templates |= other.templates

    def scores(self) -> Union[Scores, RejectJudgeScores, FactJudgeScores]:
        """The score object (diagnostics: the empty-label and no-record ones, as the scorers give them)."""
        nums, tt = self.nums, self.tt
        if self.judged:
            diags = () if nums else ("no scorable records: rates are null",)
            if self.judged == "reject":
                return RejectJudgeScores(
                    self.flagged / nums if nums else None, tt / nums if nums else None, tt, self.flagged, nums, diags
                )
            return FactJudgeScores(
                self.flagged / nums if nums else None,
                tt / nums if nums else None,
                self.flagged_correct / self.flagged if self.flagged > 0 else 0,
                tt,
                self.flagged,
                self.flagged_correct,
                nums,
                self.noise_rate,
                diags,
            )
        diagnostics = [
            f"{who or f'record {pos}'}: label is [] at noise_rate 1 (the reference fails on label[0]); not counted"
            for pos, who in self.empty_noise1
        ]
        fact = _is_fact(self.dataset)
        if nums == 0:
            diagnostics.append("no scorable records: all_rate is null")
        return Scores(
            tt / nums if nums else None,
            self.noise_rate,
            tt,
            nums,
            fact,
            (self.flagged / nums if nums else None) if fact else None,
            self.flagged_correct / self.flagged if self.flagged > 0 else 0,
            self.flagged,
            self.flagged_correct,
            tuple(diagnostics),
        )

    def _extra_params(self) -> List[Tuple[str, object]]:
        return []

    def finalize(self) -> Report:
        scored = self.scores()
        result = scored.to_dict()
        return Report(
            family=FAMILY,
            signature=signature(variants=self.variants, params=self._signature_params() + self._extra_params()),
            result=result,
            metrics=result_metrics(result),
            diagnostics=list(self.skipped) + list(scored.diagnostics) + self.notes(),
        )


@register_accumulator
class JudgeAccumulator(ScoreAccumulator):
    """``rgb judge``: the judged :class:`ScoreAccumulator` whose signature also names the judge model.

    The judge statistics (``judge_calls``...) are added by the CLI; they are not part of the
    mergeable state.
    """

    COMMAND = "judge"
    METRICS = tuple(m for m in _SCORE_METRICS if m.name in _JUDGED_METRIC_NAMES) + _JUDGE_STATS
    INPUTS = (
        Input(
            "--input",
            "model predictions with their questions (JSON Lines)",
            "id",
            _PREDICTION_FIELDS
            + (InputField("query", ("string",), True, "an input error: the judge prompt needs the question"),),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields({**_SCORE_STATE_PARAMS, "judged": Text(choices=JUDGED), "judge_model": Text(max_len=10_000)}),
        data=_SCORE_STATE_DATA,
    )

    def __init__(
        self,
        *,
        dataset: str,
        noise_rate: Number,
        judged: str,
        judge_model: str,
        use_labels: bool = True,
        variants: Sequence[str] = (),
    ) -> None:
        if judged not in JUDGED:
            raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
        super().__init__(
            dataset=dataset, noise_rate=noise_rate, use_labels=use_labels, variants=variants, judged=judged
        )
        self.params["judge_model"] = judge_model
        self.judge_model = judge_model

    def _extra_params(self) -> List[Tuple[str, object]]:
        return [("judge_model", self.judge_model)]


def score(
    results: Iterable[Mapping[str, Any]],
    *,
    dataset: str,
    noise_rate: Number,
    variants: Iterable[str] = (),
) -> Scores:
    """The reference's aggregate over labelled records (``{label, factlabel[, id]}``).

    ``tt`` counts records with ``(noise_rate == 1 and label[0] == -1) or
    (0 not in label and 1 in label)``; ``all_rate = tt / nums`` with ``nums`` the number of
    records.  So ``[]`` is never correct, and at noise 1 (``1`` or ``1.0``) a correct answer
    counts as well as a rejection (the reference's "rejection rate" is "rejected or
    correct"; variant ``noise1_reject_only`` counts only rejections there).

    For ``'_fact' in dataset``: ``fact_tt`` = #``factlabel == 1``, ``fact_check_rate =
    fact_tt / nums`` (error detection), ``correct_tt`` = #``factlabel == 1 and 0 not in
    label`` (quirk: ``1 in label`` is not required, so ``[-1]`` or ``[]`` counts; variant
    ``fact_correct_requires_hit`` requires it), ``correct_rate = correct_tt / fact_tt`` or
    the **int** ``0`` when ``fact_tt == 0``.  No rounding.

    Crash paths of the reference, defined here: no records gives ``all_rate`` (and
    ``fact_check_rate``) ``None`` with the counts 0, ``correct_rate`` int 0 and the
    diagnostic "no scorable records"; ``label == []`` at noise 1 (IndexError upstream) is
    judged by the normal clause only (not counted) with a diagnostic naming the record.
    A stored label that is not a list of ints -1/0/1 (or a factlabel not 0/1 on a fact
    dataset) is a :class:`ScoringError`.

    >>> s = score([{"label": [1]}, {"label": [-1]}, {"label": [0]}], dataset="en", noise_rate=1.0)
    >>> s.to_dict()
    {'all_rate': 0.6666666666666666, 'noise_rate': 1.0, 'tt': 2, 'nums': 3}
    """
    variants = check_variants(variants)
    acc = ScoreAccumulator(dataset=dataset, noise_rate=noise_rate, variants=variants)
    fact = _is_fact(dataset)
    for pos, record in enumerate(results, 1):
        rid, who, label = _checked_record(record, pos)
        factlabel = _checked_factlabel(record.get("factlabel"), who) if fact else None
        acc.add(label_row(rid, label, factlabel, dataset=dataset, noise_rate=noise_rate, variants=variants))
    scores = acc.scores()
    assert isinstance(scores, Scores)
    return scores
