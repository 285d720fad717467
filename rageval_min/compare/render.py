"""Pipeline step: the compare report as text and as a PR-ready markdown table (``--format text|markdown``)."""

from typing import Any, Dict, List, Sequence

from ..gates import GateOutcome
from ..report import Report, format_number, overall_pass, text_table

__all__ = ["format_markdown", "format_text"]


def _interval(m: Dict[str, Any]) -> str:
    if m.get("ci_low") is None:
        return ""
    return f" [{format_number(m['ci_low'])}, {format_number(m['ci_high'])}]"


def _rows(report: Report) -> List[List[str]]:
    rows = []
    for name, m in report.result["metrics"].items():
        rows.append(
            [
                name,
                format_number(m["baseline"]),
                format_number(m["candidate"]),
                format_number(m["delta"]) + _interval(m),
                format_number(m.get("p_value")),
                m["verdict"],
            ]
        )
    return rows


_HEAD = ["metric", "baseline", "candidate", "delta [interval]", "p", "verdict"]


def format_markdown(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """A PR-ready table: one row per metric, then the largest per-item regressions."""
    ok = overall_pass(report, outcomes)
    r = report.result
    lines = [
        f"### rageval-min compare: {'PASS' if ok else 'FAIL'}",
        "",
        f"{r['paired']} paired rows by `{r['key']}` ({r['only_baseline']} only in the baseline, "
        f"{r['only_candidate']} only in the candidate).",
        "",
        "| " + " | ".join(_HEAD) + " |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in _rows(report)]
    if r["regressions"]:
        lines += [
            "",
            "Largest per-item regressions:",
            "",
            "| id | metric | baseline | candidate |",
            "| --- | --- | ---: | ---: |",
        ]
        for g in r["regressions"]:
            lines.append(
                f"| `{g['key']}` | {g['metric']} | {format_number(g['baseline'])} | {format_number(g['candidate'])} |"
            )
    failed = [o for o in list(report.family_gates) + list(outcomes) if o.passed is False]
    if failed:
        lines += ["", "Failed: " + ", ".join(f"`{o.text}`" for o in failed)]
    if report.diagnostics:
        lines += [""] + [f"- {d}" for d in report.diagnostics]
    lines += ["", f"<sub>`{report.signature}`</sub>"]
    return "\n".join(lines) + "\n"


def format_text(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    r = report.result
    lines = [
        "rageval-min compare",
        f"signature: {report.signature}",
        f"paired: {r['paired']} by {r['key']} "
        f"(only baseline {r['only_baseline']}, only candidate {r['only_candidate']})",
        "",
    ]
    lines += text_table([_HEAD] + _rows(report))
    for g in r["regressions"]:
        before, after = format_number(g["baseline"]), format_number(g["candidate"])
        lines.append(f"regressed item {g['key']!r}: {g['metric']} {before} -> {after}")
    for o in list(report.family_gates) + list(outcomes):
        lines.append(f"gate {o.text}: {'pass' if o.passed else 'FAIL'}")
    lines += [f"note: {d}" for d in report.diagnostics]
    lines += ["", "result: " + ("PASS" if overall_pass(report, outcomes) else "FAIL")]
    return "\n".join(lines) + "\n"
