"""Pipeline step: what each pairwise metric and input field is (the accumulators' ``METRICS`` and ``INPUTS``).

Report metrics are the gateable ``Report.metrics`` keys (:func:`~.sub_eval.table_metrics`
and :func:`~.extras.add_extras`); per-item metrics are the numeric fields of an item
row (:func:`~.items.score_item`), read for the candidate model (the slot model that
is not refm).  ``{placeholders}`` stand for models, table columns and the
new-version metric.  The win rates are the row model's rate against the other
one, so higher is better for the model the name starts with.
"""

from typing import Tuple

from .._metrics import Input, InputField, Metric
from ..judges.stats_metrics import TRUST_METRICS

__all__ = ["JUDGE_INPUTS", "JUDGE_METRICS", "SCORE_INPUTS", "SCORE_METRICS"]


def _rate(name: str, direction: str, meaning: str, numerator: str = "") -> Metric:
    """A 0..1 rate of the report."""
    return Metric(name, direction, "rate", meaning, numerator=numerator, lo=0.0, hi=1.0)


def _outcome(name: str, direction: str, meaning: str) -> Metric:
    """A 0/1 field of the item rows."""
    return Metric(name, direction, "outcome", meaning, per_item=True, lo=0.0, hi=1.0)


_COUNTS = (
    Metric("total", "neither", "count", "comparisons in the record, exact matches included (N)"),
    Metric("failed", "lower", "count", "judge calls that failed (the API fail message in the judge column)"),
    Metric("non_exact", "neither", "count", "comparisons that are not exact matches (M)"),
    Metric("extracted", "neither", "count", "non-EM comparisons with an extracted choice (S)"),
    _rate("extraction_rate", "higher", "extracted / non_exact (S/M): choices read from the judge", "parsed"),
    Metric("consistent", "neither", "count", "extracted comparisons consistent with their swapped partner (C)"),
    _rate("consistency_rate", "higher", "consistent / (consistent + inconsistent): swap consistency"),
)

_TABLES = (
    _rate("win+halfdraw;{model};{column}", "higher", "old version: (win + (C + D)/2) / total against refm, float32"),
    _rate("win+bothgood;{model};{column}", "higher", "old version: (win + C) / total against refm, float32"),
    _rate("with_tie;{metric};{model};{other}", "higher", "new version: (wins + ties/2) / comparisons of model"),
    _rate("without_tie;{metric};{model};{other}", "higher", "new version: wins / (comparisons - ties) of model"),
    Metric("length_mean;{model}", "neither", "mean", "mean answer length of the model (chars or cl100k tokens)"),
    Metric("length_std;{model}", "neither", "statistic", "population std of the model's answer lengths"),
)

_EXTRAS = (
    _rate("conservative_win_rate;{model}", "higher", "wins / complete swapped pairs (FastChat rule)"),
    _rate("conservative_win_rate_adjusted;{model}", "higher", "(wins + ties/2) / complete swapped pairs"),
    _rate("consistency_rate;{model}", "higher", "swap consistency of the model's extracted comparisons"),
    _rate("unparseable_share", "lower", "answered judge calls with no readable choice / answered", "unparseable"),
)

_ITEMS = (
    _outcome("parsed", "higher", "a choice was read from the judge text (null for an exact match)"),
    _outcome("exact_match", "neither", "the two answers are equal: never judged, in no rate"),
    _outcome("api_failed", "lower", "the judge call failed (the API fail message)"),
    _outcome("unparseable", "lower", "the judge answered but no choice could be read (null for EM and failed)"),
    _outcome("judge_missing", "lower", "the judge text is empty or an NA token"),
    _outcome("win", "higher", "the candidate won this verdict (null without a choice)"),
    _outcome("tie", "neither", "the verdict is C or D for the candidate (null without a choice)"),
    _outcome("loss", "lower", "refm won this verdict (null without a choice)"),
    Metric("length_a", "neither", "count", "length of the answer in slot A", per_item=True),
    Metric("length_b", "neither", "count", "length of the answer in slot B", per_item=True),
)

#: ``pairwise score``: every metric of the report and of the item rows.
SCORE_METRICS: Tuple[Metric, ...] = _COUNTS + _TABLES + _EXTRAS + _ITEMS

#: ``pairwise judge``: the same, plus the judge runner's statistics.
JUDGE_METRICS: Tuple[Metric, ...] = (
    SCORE_METRICS
    + (
        Metric("judge_calls", "neither", "count", "prompts sent to the judge (retries not counted again)"),
        Metric("judge_cache_hits", "neither", "count", "prompts answered from the judge cache"),
        Metric("judge_failures", "lower", "count", "judge calls that still failed after the retries"),
        Metric("judge_unparseable", "lower", "count", "judge answers with no extractable choice"),
    )
    + TRUST_METRICS
)

_FATAL = "an input error naming the row (the reference fails)"

#: ``pairwise score --record``: the judge record (comparison columns and the judge column).
SCORE_INPUTS: Tuple[Input, ...] = (
    Input(
        "--record",
        "the judge record: comparison columns and the judge's output",
        "cmp_index",
        (
            InputField("cmp_index", ("string",), True, _FATAL),
            InputField("A", ("string", "number"), True, _FATAL),
            InputField("B", ("string", "number"), True, _FATAL),
            InputField("answer1", ("string", "number", "null"), True, "the text 'nan' (its length is counted)"),
            InputField("answer2", ("string", "number", "null"), True, "the text 'nan' (its length is counted)"),
            InputField(
                "{judge column}", ("string", "null"), True, "unparseable, with a diagnostic (the reference fails)"
            ),
            InputField("task", ("string", "null"), False, "counted in Overall-lang and EN only (the reference fails)"),
            InputField("exact_match", ("boolean",), False, "an empty judge text is unparseable, not EM"),
            InputField("question", ("string", "null"), False, "copied as is to the consistency files"),
            InputField("reference_answer", ("string", "null"), False, "copied as is to the consistency files"),
            InputField("evaluating_guidance", ("string", "null"), False, "copied as is to the consistency files"),
        ),
    ),
)

#: ``pairwise judge --input``: the answer table the comparisons are built from.
JUDGE_INPUTS: Tuple[Input, ...] = (
    Input(
        "--input",
        "the answer table: one row per question, one answer column per model",
        "index",
        (
            InputField("index", ("string", "number"), True, _FATAL),
            InputField("question", ("string", "number"), True, _FATAL),
            InputField(
                "evaluating_guidance", ("string", "null"), True, "the literal <Evaluating Guidance> stays in the prompt"
            ),
            InputField("answer-{model}", ("string", "number", "null"), True, "the text 'nan'"),
            InputField("reference_answer", ("string", "null"), False, "no reference block in the prompt"),
            InputField("task", ("string", "null"), False, "counted in Overall-lang and EN only (the reference fails)"),
        ),
    ),
)
