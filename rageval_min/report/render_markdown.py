"""The ``markdown`` format: tables for a CI job summary."""

from typing import Sequence

from ..gates import GateOutcome
from .model import Report, format_number, gate_rows, gate_status, interval_text, overall_pass

__all__ = ["render_markdown"]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    ok = overall_pass(report, outcomes)
    lines = [f"### rageval-min {report.family}: {'PASS' if ok else 'FAIL'}", ""]
    if report.metrics and report.intervals:  # --intervals: a third column
        lines += ["| metric | value | interval |", "| --- | ---: | ---: |"]
        lines += [
            f"| {_md_cell(k)} | {format_number(v)} | {interval_text(report, k)} |" for k, v in report.metrics.items()
        ]
        lines.append("")
    elif report.metrics:
        lines += ["| metric | value |", "| --- | ---: |"]
        lines += [f"| {_md_cell(k)} | {format_number(v)} |" for k, v in report.metrics.items()]
        lines.append("")
    gates = gate_rows(report, outcomes)
    if gates:
        lines += ["| gate | value | status |", "| --- | ---: | --- |"]
        lines += [f"| `{_md_cell(o.text)}` | {format_number(o.value)} | {gate_status(o)} |" for o in gates]
        lines.append("")
    if report.diagnostics:
        lines += [f"- {_md_cell(d)}" for d in report.diagnostics]
        lines.append("")
    lines.append(f"<sub>`{report.signature}`</sub>")
    return "\n".join(lines) + "\n"
