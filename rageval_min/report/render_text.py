"""The ``text`` format: aligned tables of metrics and gates for people."""

from typing import List, Sequence

from ..gates import GateOutcome
from .model import Report, format_number, gate_rows, gate_status, interval_text, overall_pass

__all__ = ["render_text", "text_table"]


def text_table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_text(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    lines = [f"rageval-min {report.family}", f"signature: {report.signature}", ""]
    if report.metrics and report.intervals:  # --intervals: a third column
        head = ("metric", "value", f"interval ({_level(report)})")
        rows = [(k, format_number(v), interval_text(report, k)) for k, v in report.metrics.items()]
        lines += text_table([head] + rows)
    elif report.metrics:
        lines += text_table([("metric", "value")] + [(k, format_number(v)) for k, v in report.metrics.items()])
    gates = gate_rows(report, outcomes)
    if gates:
        lines.append("")
        lines += text_table(
            [("gate", "value", "status")] + [(o.text, format_number(o.value), gate_status(o)) for o in gates]
        )
    for d in report.diagnostics:
        lines.append(f"note: {d}")
    lines.append("")
    lines.append("result: " + ("PASS" if overall_pass(report, outcomes) else "FAIL"))
    return "\n".join(lines) + "\n"


def _level(report: Report) -> str:
    """The intervals' confidence level, as a percentage (they share one)."""
    levels = {iv.get("level") for iv in (report.intervals or {}).values()}
    level = levels.pop() if len(levels) == 1 else None
    return f"{format_number(level * 100)}%" if isinstance(level, (int, float)) else "levels vary"
