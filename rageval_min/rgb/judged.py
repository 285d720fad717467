"""Pipeline step: the judged item rows and score objects of ``rgb score --judged`` (Rej*, ED*, CR).

The per-record half of ``chen700564/RGB@65ec39e:reject_evalue.py`` and
``chen700564/RGB@65ec39e:fact_evalue.py``: a stored judge output (``evaluation``) is read
with the reference's verdict test and, with the record's label, gives one item row; the
rows add up in the judged :class:`~rageval_min.rgb.ScoreAccumulator`.
"""

from typing import Any, Iterable, List, Mapping, Optional

from .._contract import ItemRow
from ..errors import ScoringError
from ._common import JUDGED, Number
from .accumulators import ScoreAccumulator
from .evalue import _checked_record
from .fact_evalue import FactJudgeScores, parse_fact_judgement
from .reject_evalue import RejectJudgeScores, parse_reject_judgement

__all__ = [
    "judged_row",
    "score_fact_judged",
    "score_reject_judged",
]


def judged_row(
    record_id: Any,
    label: List[int],
    evaluation: Any,
    *,
    judged: str,
    judge_template: str = "unrecorded",
    who: Optional[str] = None,
) -> ItemRow:
    """The item row of one judged record (``rgb score --judged`` and ``rgb judge``).

    Keys: ``id``, ``label``, ``correct`` (``0 not in label and 1 in label``), ``all_rate``
    (the same outcome: the judged ``all_rate`` is ``tt / nums``), ``reject_rate`` (1 when
    the judge output says rejected (reject) or errors detected (fact)), ``correct_rate``
    (fact only, for a flagged record: ``correct``; else ``None``), ``judge_template`` (the
    record's template id) and ``skipped`` (``None``).  A non-string ``evaluation`` is a
    :class:`ScoringError`.
    """
    if judged not in JUDGED:
        raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
    parse = parse_reject_judgement if judged == "reject" else parse_fact_judgement
    try:
        verdict = 1 if parse(evaluation) else 0
    except ScoringError as exc:
        raise ScoringError(exc.msg, record=who, field="evaluation") from None
    correct = 1 if (0 not in label and 1 in label) else 0
    return {
        "id": record_id,
        "label": list(label),
        "correct": correct,
        "all_rate": correct,
        "reject_rate": verdict,
        "correct_rate": (correct if verdict else None) if judged == "fact" else None,
        "judge_template": judge_template,
        "skipped": None,
    }


def _judged_acc(results: Iterable[Mapping[str, Any]], judged: str, noise_rate: Number) -> "ScoreAccumulator":
    acc = ScoreAccumulator(dataset="", noise_rate=noise_rate, judged=judged)
    for pos, record in enumerate(results, 1):
        rid, who, label = _checked_record(record, pos)
        if "evaluation" not in record:
            raise ScoringError("record has no 'evaluation' (the stored judge output)", record=who, field="evaluation")
        acc.add(judged_row(rid, label, record["evaluation"], judged=judged, who=who))
    return acc


def score_reject_judged(results: Iterable[Mapping[str, Any]]) -> RejectJudgeScores:
    """Rej*: ``reject_rate = rejecttt / nums`` from stored judge outputs (``evaluation``).

    ``rejecttt`` counts records whose judge output contains ``not addressed``;
    ``all_rate = tt / nums`` where ``tt`` counts ``0 not in label and 1 in label`` (no
    noise-1 clause here).  No records: rates ``None`` plus a diagnostic.
    """
    scores = _judged_acc(results, "reject", 0.0).scores()
    assert isinstance(scores, RejectJudgeScores)
    return scores


def score_fact_judged(results: Iterable[Mapping[str, Any]], *, noise_rate: Number) -> FactJudgeScores:
    """ED* and CR from stored judge outputs (``evaluation``), as ``fact_evalue.py``.

    ``rejecttt`` counts records judged as detecting the errors (:func:`parse_fact_judgement`),
    ``reject_rate = rejecttt / nums`` (ED*), ``all_rate = tt / nums``, ``correct_tt`` counts
    detected records with ``0 not in label and 1 in label`` (stricter than :func:`score`),
    ``correct_rate = correct_tt / rejecttt`` or int ``0``.  No records: rates ``None``.
    """
    scores = _judged_acc(results, "fact", noise_rate).scores()
    assert isinstance(scores, FactJudgeScores)
    return scores
