"""Pipeline step: the whole judge orchestration of ``rgb judge`` (prompts, the runner, the judged records).

``rgb judge`` labels the predictions, builds each record's judge prompt
(:func:`judge_prompts_file`, the same records ``rgb label --judge`` writes), asks the judge
through the one runner (:mod:`rageval_min.judges`), stores each answer as the record's
``evaluation`` and scores the records as ``rgb score --judged --use-labels`` would read them
(:func:`score_judged_records`).  The prompts and verdict tests mirror
``chen700564/RGB@65ec39e:reject_evalue.py`` and ``fact_evalue.py`` (see
:mod:`rageval_min.rgb.reject_evalue`, :mod:`rageval_min.rgb.fact_evalue`).
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .._contract import ItemRow, finish
from .._io import write_jsonl
from ..errors import ScoringError
from ..report import Report
from .accumulators import JudgeAccumulator
from .fact_evalue import parse_fact_judgement
from .files import _accumulate_rows, label_file
from .reject_evalue import parse_reject_judgement

if TYPE_CHECKING:  # the judge stack is imported by the caller that builds the runner
    from ..judges.runner import JudgeRunner

__all__ = [
    "RGB_PARAMS",
    "ask_judge",
    "judge_file",
    "judge_prompts_file",
    "score_judge_run",
    "score_judged_records",
]

#: rgb judge: the reference sends the model and one user message, nothing else.
RGB_PARAMS: Dict[str, Any] = {}


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


def ask_judge(records: List[Dict[str, Any]], runner: "JudgeRunner", *, judged: str) -> List[str]:
    """Ask ``runner`` every record's ``judge_prompt``; store ``evaluation`` (and ``judge_error``) in place.

    Records without a string ``judge_prompt`` (the ones the reference drops) are not
    sent.  With ``--samples N`` each answer's vote is the reference's verdict test
    (rejected / errors detected, a pass/fail vote) and ``evaluation`` is the first
    sample whose verdict is the pass rule's, so scoring reads the rule's verdict.
    The runner is closed afterwards, whatever happens.  Returns one line per failed call
    (``id=...: error``), in input order.
    """
    try:
        asked = [i for i, r in enumerate(records) if isinstance(r.get("judge_prompt"), str)]
        res = runner.run(
            [records[i]["judge_prompt"] for i in asked],
            params=RGB_PARAMS,
            label=f"rgb judge {judged}",
            vote=parse_reject_judgement if judged == "reject" else parse_fact_judgement,
            kind="bool",
        )
    finally:
        runner.close()
    failed: List[str] = []
    for k, i in enumerate(asked):
        records[i]["evaluation"] = res.answers[k]
        if res.errors[k] is not None:
            records[i]["judge_error"] = res.errors[k]
            failed.append(f"id={records[i].get('id', i + 1)}: {res.errors[k]}")
    return failed


def judge_file(
    path: str,
    *,
    judged: str,
    dataset: str,
    variants: Sequence[str] = (),
    template: Optional[str] = None,
    make_runner: Callable[[], "JudgeRunner"],
    records_path: Optional[str] = None,
) -> Tuple[List[Dict[str, Any]], "JudgeRunner"]:
    """Label ``path``, build every prompt, then ask the judge: ``(judged records, runner)``.

    The whole input is checked (and every prompt built) before ``make_runner`` is
    called.  With ``records_path`` the judged records are written there (also when a
    call failed).  A failed call is a :class:`ScoringError` after the others are
    cached (a rerun retries only the failed ones).
    """
    records = judge_prompts_file(path, judged=judged, dataset=dataset, variants=variants, template=template)
    runner = make_runner()
    failed = ask_judge(records, runner, judged=judged)
    if records_path:  # with failed calls too, at once: the run then stops (exit 2) and a rerun resumes
        write_jsonl(records_path, records, alone=bool(failed))
    if failed:
        where = f"the judged records are in {records_path} and " if records_path else ""
        raise ScoringError(
            f"{len(failed)} judge call(s) failed (first: {failed[0]}); {where}"
            "the answers so far are cached: rerun to retry the failed ones"
        )
    return records, runner


def score_judge_run(
    records: Sequence[Mapping[str, Any]],
    runner: "JudgeRunner",
    *,
    path: str,
    dataset: str,
    noise_rate: float,
    judged: str,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """:func:`score_judged_records` of a :func:`judge_file` run, with the runner's model and judge statistics."""
    from ..judges.options import judge_model, with_judge_stats

    report = score_judged_records(
        records,
        path=path,
        dataset=dataset,
        noise_rate=noise_rate,
        judged=judged,
        judge_model=judge_model(runner),
        variants=variants,
        on_item=on_item,
    )
    return with_judge_stats(report, runner)
