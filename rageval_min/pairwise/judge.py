"""Pipeline step: the judge run of ``pairwise judge`` (comparisons -> prompts -> the judge -> record -> report).

The order follows ``open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/judge_util.py``
(``judge_infer``): exact matches are never sent and get ``EM`` in the judge
column; every other comparison gets one prompt (:func:`~.prompts.render_prompt`)
sent once with the reference's call settings (:data:`PAIRWISE_PARAMS`); a call
that still fails after the runner's retries is recorded as the reference's
fail message, which scoring counts against ``--failure-limit``.  The judged
record (the comparison columns plus the judge column) is written as JSON Lines
and scored by :func:`~.sub_eval.score` exactly as ``pairwise score`` would
score it, with the judge's model in the signature and the runner's statistics
in the report.
"""

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import judges
from .._contract import ItemRow
from .._io import write_jsonl
from ..judges.options import judge_model, with_judge_stats
from ..judges.stats_metrics import TRUST_METRIC_NAMES
from ..report import Report
from ._common import EM_MARKER, FAIL_MESSAGE
from .analyze_util import extract_choice
from .construct_util import Comparison
from .prompts import render_prompt
from .sub_eval import possible_metric_names, score

__all__ = ["PAIRWISE_PARAMS", "choice_parser", "gate_names", "judge_prompts", "judge_records", "score_judged"]

#: The reference's judge call settings (one user message, temperature 0).  The reference's
#: max_tokens is min(1024, context window - prompt tokens); 1024 is sent here (no tokenizer).
PAIRWISE_PARAMS: Dict[str, Any] = {"temperature": 0, "max_tokens": 1024}


def gate_names(comparisons: Sequence[Comparison], *, refm: str, extras: Sequence[str]) -> List[str]:
    """Every gateable name of a judged run: :func:`~.sub_eval.possible_metric_names` and the judge's statistics."""
    names = possible_metric_names(comparisons, refm=refm, extras=extras)
    return names + list(judges.JudgeStats().as_metrics()) + list(TRUST_METRIC_NAMES)


def judge_prompts(comparisons: Sequence[Comparison], *, nopt: int, template: Optional[str]) -> List[Tuple[int, str]]:
    """``(position, prompt)`` of every comparison that is not an exact match, in order."""
    return [(i, render_prompt(c, nopt=nopt, template=template)) for i, c in enumerate(comparisons) if not c.exact_match]


def choice_parser(nopt: int) -> Callable[[str], Any]:
    """The runner's answer parser: the extracted choice, or unparseable when there is none."""

    def parse(answer: str) -> Any:
        choice = extract_choice(answer, nopt=nopt)
        if choice is None:
            raise judges.UnparseableAnswer(None)
        return choice

    return parse


def _records(
    comparisons: Sequence[Comparison],
    prompts: Sequence[Tuple[int, str]],
    answers: Sequence[Optional[str]],
    *,
    judge_column: str,
) -> List[Dict[str, Any]]:
    """The judged record: each comparison's columns and its judge text (EM marker, answer or fail message)."""
    records: List[Dict[str, Any]] = []
    for c in comparisons:
        rec: Dict[str, Any] = dict(c.as_record())
        rec[judge_column] = EM_MARKER if c.exact_match else None
        records.append(rec)
    for k, (i, _) in enumerate(prompts):
        answer = answers[k]
        records[i][judge_column] = FAIL_MESSAGE if answer is None else answer
    return records


def judge_records(
    comparisons: Sequence[Comparison],
    open_runner: Callable[[], judges.JudgeRunner],
    *,
    nopt: int,
    template: Optional[str],
    judge_column: str,
    path: str,
) -> Tuple[List[Dict[str, Any]], judges.JudgeRunner]:
    """Build the prompts, open the runner, ask the judge, write the judged record to ``path``.

    Returns the records and the (closed) runner, for its model name and statistics.
    """
    prompts = judge_prompts(comparisons, nopt=nopt, template=template)
    runner = open_runner()
    try:
        res = runner.run(
            [p for _, p in prompts],
            params=PAIRWISE_PARAMS,
            parse=choice_parser(nopt),
            label="pairwise judge",
            vote=str,
            kind="label",
        )
    finally:
        runner.close()
    records = _records(comparisons, prompts, res.answers, judge_column=judge_column)
    write_jsonl(path, records)
    return records, runner


def score_judged(
    records: Sequence[Mapping[str, Any]],
    runner: judges.JudgeRunner,
    *,
    nopt: int,
    refm: str,
    judge_column: str,
    variants: Sequence[str],
    extras: Sequence[str],
    failure_limit: int,
    template: Optional[str],
    notes: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The report of a judged record: :func:`~.sub_eval.score` as ``pairwise judge``, with the runner's statistics."""
    scored = score(
        records,
        nopt=nopt,
        refm=refm,
        judge_column=judge_column,
        variants=variants,
        extras=extras,
        failure_cnt=failure_limit,
        judge_template=template,
        judge_model=judge_model(runner),
        command="judge",
        notes=notes,
        on_item=on_item,
    )
    return with_judge_stats(scored.report, runner)
