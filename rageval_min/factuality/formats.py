"""Pipeline step: the family's own report formats (``jsonl``, ``safe``), for the CLI and ``rageval-min merge``."""

import json
import math
from typing import (
    Sequence,
)

from .._io import dumps
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report, overall_pass


def gate_trailer(outcomes: Sequence[GateOutcome], passed: bool) -> str:
    """The last line of a gated ``jsonl`` output: ``{"gates": [...], "pass": ...}``.

    The gate objects are those of the JSON report, so a gated run never
    decides on a value its output does not show.
    """
    gates = [
        {
            "gate": o.text,
            "name": o.name,
            "op": o.op,
            "threshold": o.threshold,
            "value": None if isinstance(o.value, float) and not math.isfinite(o.value) else o.value,
            "passed": o.passed,
        }
        for o in outcomes
    ]
    return json.dumps({"gates": gates, "pass": passed}, ensure_ascii=False) + "\n"


def render_jsonl(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """``--format jsonl`` of a report holding its lines (``correlate``), plus the gate line when gated.

    ``f1k`` writes its lines while it scores and keeps only the values its
    summary needs, so its report (and a merge of its states) has no lines: a
    ScoringError says so.
    """
    if "lines" not in report.result:
        raise ScoringError(
            "--format jsonl: this report has no per-line results (f1k writes its lines while it scores; "
            "`merge` writes its report as json, text, markdown, junit or html)"
        )
    text = "".join(dumps(line, ensure_ascii=False) + "\n" for line in report.result["lines"])  # NaN: null
    if outcomes:
        text += gate_trailer(outcomes, overall_pass(report, outcomes))
    return text


def render_safe(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """``--format safe`` needs run_eval's output document, which only ``factuality safe`` has (a ScoringError).

    ``factuality safe`` renders it from :func:`safe_evaluate`'s ``result``; a
    report rebuilt from partial states (``merge``) does not carry the document.
    """
    raise ScoringError(
        "--format safe is the document run_eval writes, which only `factuality safe` on the experiment "
        "file can produce; `merge` writes its report as json, text, markdown, junit or html"
    )


REPORT_FORMATS = {"jsonl": render_jsonl, "safe": render_safe}
"""The family's own report formats (format -> ``(report, gate outcomes) -> text``)."""
