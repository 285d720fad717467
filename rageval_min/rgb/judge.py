"""Pipeline step: the whole judge orchestration of ``rgb judge`` (prompts, the runner, the judged records).

``rgb judge`` labels the predictions, builds each record's judge prompt
(:func:`judge_prompts_file`, the same records ``rgb label --judge`` writes), asks the judge
through the one runner (:mod:`rageval_min.judges`), stores each answer as the record's
``evaluation`` and scores the records as ``rgb score --judged --use-labels`` would read them
(:func:`score_judged_records`).  The prompts and verdict tests mirror
``chen700564/RGB@65ec39e:reject_evalue.py`` and ``fact_evalue.py`` (see
:mod:`rageval_min.rgb.reject_evalue`, :mod:`rageval_min.rgb.fact_evalue`).
"""

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from .._contract import ItemRow, finish
from ..report import Report
from .accumulators import JudgeAccumulator
from .files import _accumulate_rows, label_file

__all__ = [
    "judge_prompts_file",
    "score_judged_records",
]


def score_judged_records(
    records: Sequence[Mapping[str, Any]],
    *,
    path: str,
    dataset: str,
    noise_rate: float,
    judged: str,
    judge_model: str,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``rgb judge``: score judged records in memory (as ``rgb score --judged --use-labels`` reads them).

    ``path`` names the records in diagnostics (line = 1-based position).  The judge
    calls happen before (in the caller); only this scoring runs on the current engine.
    """
    acc = JudgeAccumulator(
        dataset=dataset, noise_rate=noise_rate, judged=judged, judge_model=judge_model, variants=variants
    )
    rows = ((i, dict(rec)) for i, rec in enumerate(records, 1))
    return finish(_accumulate_rows(acc, rows, path, on_item))


def judge_prompts_file(
    path: str,
    *,
    judged: str,
    dataset: str,
    variants: Sequence[str] = (),
    template: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """The labelled records of ``path`` with their judge prompts (``rgb label --judge``), all in memory.

    The whole file is validated here, before any judge call.
    """
    records: List[Dict[str, Any]] = []
    label_file(path, dataset=dataset, variants=variants, judge=judged, template=template, on_record=records.append)
    return records
