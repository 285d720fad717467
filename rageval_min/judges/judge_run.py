"""Pipeline step: ``judge run`` -- every prompt of a prompts file through the runner, the answers and a stats report.

The library half of ``rageval-min judge run`` (the command is
:mod:`rageval_min.judges.cli`): :func:`read_prompts` reads the ids and
prompts (or renders a template with each record's fields), :func:`compute`
asks the judge and builds the output rows and the gateable report.
"""

import json
import math
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .._io import Problems, first_bad_path, iter_records
from .._signature import make_signature
from ..gates import GateOutcome
from ..report import Report
from .interface import canonical_json
from .runner import JudgeRunner
from .templates import PromptTemplate

__all__ = ["REF", "Prompts", "compute", "read_prompts"]

REF = "rageval-min/judges@none"


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


class Prompts(NamedTuple):
    """What :func:`read_prompts` found: per record its id, prompt (``None``: not for the judge) and the record."""

    ids: List[Any]
    prompts: List[Optional[str]]
    records: List[Dict[str, Any]]


def read_prompts(
    path: str,
    *,
    id_field: str = "id",
    prompt_field: str = "prompt",
    template: Optional[PromptTemplate] = None,
) -> Prompts:
    """The ids and prompts of a prompts file (every bad record reported at once).

    A record whose prompt field is JSON ``null`` is not sent to the judge (a
    family marks records that way, e.g. pairwise exact matches).
    """
    out = Prompts([], [], [])
    problems = Problems()
    for line, rec in iter_records(path):
        bad = first_bad_path(rec, _non_finite)
        if bad is not None:
            problems.add(
                "a number that overflows a float (or NaN) cannot be written back", path=path, line=line, field=bad
            )
            continue
        rid = rec.get(id_field, line)
        prompt: Optional[str]
        if template is not None:
            missing = [f for f in template.fields if f not in rec]
            if missing:
                problems.add("missing template field", path=path, line=line, field=",".join(missing))
                continue
            values = {
                f: (rec[f] if isinstance(rec[f], str) else json.dumps(rec[f], ensure_ascii=False))
                for f in template.fields
            }
            prompt = template.render(**values)
        else:
            value = rec.get(prompt_field)
            if prompt_field not in rec or (value is not None and not isinstance(value, str)):
                what = "missing" if prompt_field not in rec else f"not a string ({type(value).__name__})"
                problems.add(what, path=path, line=line, field=prompt_field)
                continue
            prompt = value
        out.ids.append(rid)
        out.prompts.append(prompt)
        out.records.append(rec)
    problems.raise_if_any()
    return out


def _vote(answer: Any) -> str:
    """``judge run``'s vote with ``--samples``: the whole answer text, stripped (a label)."""
    return str(answer).strip()


def compute(
    runner: JudgeRunner,
    data: Prompts,
    *,
    params: Dict[str, Any],
    template: Optional[PromptTemplate],
    answer_field: Optional[str] = None,
) -> Tuple[Report, List[Dict[str, Any]]]:
    """Ask the judge; return the stats report and the output rows.

    Output rows are ``{"id", "answer", "error"}``, or with ``answer_field`` the
    input record with the answer stored under that name (``null`` when the
    call failed, with ``judge_error`` holding the message).
    """
    asked = [i for i, p in enumerate(data.prompts) if p is not None]
    to_ask: List[str] = [p for p in data.prompts if p is not None]
    res = runner.run(to_ask, params=params, label="judge run", vote=_vote, kind="label")
    n = len(data.prompts)
    answers: List[Optional[str]] = [None] * n
    errors: List[Optional[str]] = [None] * n
    for k, i in enumerate(asked):
        answers[i] = res.answers[k]
        errors[i] = res.errors[k]
    rows: List[Dict[str, Any]] = []
    for rid, rec, a, e in zip(data.ids, data.records, answers, errors):
        if answer_field is None:
            rows.append({"id": rid, "answer": a, "error": e})
        else:
            row = dict(rec)
            row[answer_field] = a
            if e is not None:
                row["judge_error"] = e
            rows.append(row)
    judge = runner.judge
    sig = make_signature(
        "judge",
        REF,
        (),
        [
            ("judge", judge.identity),
            ("judge_model", getattr(judge, "model", "") or "none"),
            ("judge_template", template.signature_value if template is not None else "none"),
            ("params", canonical_json(params)),
        ],
    )
    stats = res.stats
    failures_ok = stats.failures == 0
    metrics: Dict[str, Any] = dict(stats.as_metrics())
    metrics["judge_skipped"] = n - len(asked)
    metrics.update(runner.extra_metrics())
    report = Report(
        family="judge",
        signature=sig,
        result=dict([("records", n), ("skipped", n - len(asked))] + list(stats._asdict().items())),
        metrics=metrics,
        diagnostics=[f"{i}: {e}" for i, e in zip(data.ids, errors) if e is not None][:20],
        reference_pass=None,
        family_gates=[GateOutcome("judge_failures", "==", 0.0, stats.failures, failures_ok, "judge_failures==0")],
    )
    return report, rows
