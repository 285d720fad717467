"""The result envelope shared by every family, and its output formats.

A family computes a :class:`Report`; :func:`render` turns it (with the gate
outcomes) into one of the formats below.

``json``
    One object, keys in this order: ``family``, ``signature``, ``result`` (the
    family's payload in the reference's key order), ``gates`` (list of
    ``{gate, name, op, threshold, value, passed}``), ``pass``, ``diagnostics``.
    Printed with ``indent=2`` and a trailing newline.
``text``
    An aligned table for people.
``markdown``
    Tables for a CI job summary.
``junit``
    JUnit XML: one ``testcase`` per gate (failed gates get a ``failure``,
    gates the reference did not evaluate are ``skipped``); with no gates, one
    passing ``testcase`` named ``evaluation``.
"""

import json
import math
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

from .gates import GateOutcome

__all__ = ["FORMATS", "Report", "format_number", "overall_pass", "render", "text_table"]

Number = Union[int, float]

FORMATS = ("json", "text", "markdown", "junit", "html")


class Report(NamedTuple):
    """What a family hands to the CLI.

    ``metrics`` holds every gateable numeric output, unrounded, under its
    canonical name; ``result`` is the JSON payload.  ``family_gates`` are gates
    the family itself evaluates (a reference's own pass/fail), reported next to
    the user's ``--gate`` outcomes; ``reference_pass`` is their verdict.
    """

    family: str
    signature: str
    result: Dict[str, Any]
    metrics: Dict[str, Optional[Number]]
    diagnostics: List[str] = []
    reference_pass: Optional[bool] = None
    family_gates: Sequence[GateOutcome] = ()
    #: ``--intervals``: metric -> {"method", "level", "low", "high"}; written beside ``result``, never in it.
    intervals: Optional[Dict[str, Dict[str, Any]]] = None


def overall_pass(report: Report, outcomes: Sequence[GateOutcome]) -> bool:
    """True unless the reference's own gates or any user gate failed."""
    if report.reference_pass is False:
        return False
    return all(o.passed is not False for o in list(report.family_gates) + list(outcomes))


def format_number(value: Any, *, digits: int = 6, exact_from: float = 1e6) -> str:
    """A value for text output: floats to ``digits`` significant digits, in full from
    ``exact_from`` up; ints, bools and None (``n/a``) as they are.

    >>> format_number(2 / 3), format_number(1234567.5), format_number(2 / 3, digits=4)
    ('0.666667', '1234567.5', '0.6667')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return f"{value:.{digits}g}" if abs(value) < exact_from else repr(value)
    return str(value)


def _status(passed: Optional[bool]) -> str:
    return {True: "pass", False: "FAIL", None: "skipped"}[passed]


def _gate_rows(report: Report, outcomes: Sequence[GateOutcome]) -> List[GateOutcome]:
    return list(report.family_gates) + list(outcomes)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def render_json(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    obj = {
        "family": report.family,
        "signature": report.signature,
        "result": report.result,
        **({"intervals": report.intervals} if report.intervals is not None else {}),
        "gates": [
            {
                "gate": o.text,
                "name": o.name,
                "op": o.op,
                "threshold": o.threshold,
                "value": _json_value(o.value),
                "passed": o.passed,
            }
            for o in _gate_rows(report, outcomes)
        ],
        "pass": overall_pass(report, outcomes),
        "diagnostics": list(report.diagnostics),
    }
    try:
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:  # a NaN or an infinity: strict JSON writes null, and says so
        from ._io import finite_json

        clean, replaced = finite_json(obj)
        clean["diagnostics"].append(f"{replaced} non-finite number(s) (NaN or infinity) written as null")
        return json.dumps(clean, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def text_table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_text(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    lines = [f"rageval-min {report.family}", f"signature: {report.signature}", ""]
    if report.metrics:
        lines += text_table([("metric", "value")] + [(k, format_number(v)) for k, v in report.metrics.items()])
    gates = _gate_rows(report, outcomes)
    if gates:
        lines.append("")
        lines += text_table(
            [("gate", "value", "status")] + [(o.text, format_number(o.value), _status(o.passed)) for o in gates]
        )
    for d in report.diagnostics:
        lines.append(f"note: {d}")
    lines.append("")
    lines.append("result: " + ("PASS" if overall_pass(report, outcomes) else "FAIL"))
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    ok = overall_pass(report, outcomes)
    lines = [f"### rageval-min {report.family}: {'PASS' if ok else 'FAIL'}", ""]
    if report.metrics:
        lines += ["| metric | value |", "| --- | ---: |"]
        lines += [f"| {_md_cell(k)} | {format_number(v)} |" for k, v in report.metrics.items()]
        lines.append("")
    gates = _gate_rows(report, outcomes)
    if gates:
        lines += ["| gate | value | status |", "| --- | ---: | --- |"]
        lines += [f"| `{_md_cell(o.text)}` | {format_number(o.value)} | {_status(o.passed)} |" for o in gates]
        lines.append("")
    if report.diagnostics:
        lines += [f"- {_md_cell(d)}" for d in report.diagnostics]
        lines.append("")
    lines.append(f"<sub>`{report.signature}`</sub>")
    return "\n".join(lines) + "\n"


def escape(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` for XML text (what ``xml.sax.saxutils.escape`` does).

    Done here so that writing a report does not import ``xml.sax``, which pulls in
    ``urllib`` and more at start-up.

    >>> escape("a < b & c")
    'a &lt; b &amp; c'
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """A double-quoted XML attribute value (what ``xml.sax.saxutils.quoteattr`` gives for it).

    >>> quoteattr('x>="1"')
    '"x&gt;=&quot;1&quot;"'
    """
    text = escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return '"' + text.replace('"', "&quot;") + '"'


def render_junit(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    suite = f"rageval-min.{report.family}"
    gates = _gate_rows(report, outcomes)
    failures = sum(1 for o in gates if o.passed is False)
    skipped = sum(1 for o in gates if o.passed is None)
    tests = max(len(gates), 1)
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    out.append(f'<testsuites name="rageval-min" tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}">')
    out.append(
        f'  <testsuite name={quoteattr(suite)} tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}">'
    )
    out.append("    <properties>")
    out.append(f'      <property name="signature" value={quoteattr(report.signature)}/>')
    for name, value in report.metrics.items():
        out.append(f"      <property name={quoteattr('metric:' + name)} value={quoteattr(format_number(value))}/>")
    out.append("    </properties>")
    if not gates:
        out.append(f'    <testcase classname={quoteattr(suite)} name="evaluation"/>')
    for o in gates:
        head = f"    <testcase classname={quoteattr(suite)} name={quoteattr(o.text)}"
        if o.passed is True:
            out.append(head + "/>")
        elif o.passed is None:
            out.append(head + ">")
            out.append('      <skipped message="not evaluated: an earlier reference gate failed"/>')
            out.append("    </testcase>")
        else:
            msg = f"{o.name} = {format_number(o.value)}, required {o.op} {format_number(o.threshold)}"
            out.append(head + ">")
            out.append(f"      <failure message={quoteattr(msg)}>{escape(msg)}</failure>")
            out.append("    </testcase>")
    if report.diagnostics:
        out.append("    <system-out>" + escape("\n".join(report.diagnostics)) + "</system-out>")
    out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def render_html(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """A self-contained HTML page (rendered by :mod:`rageval_min._html`, imported only for this format)."""
    from ._html import render_html as _render

    return _render(report, outcomes)


Formatter = Callable[[Report, Sequence[GateOutcome]], str]

_RENDERERS: Dict[str, Formatter] = {
    "json": render_json,
    "text": render_text,
    "markdown": render_markdown,
    "junit": render_junit,
    "html": render_html,
}


def render(
    report: Report,
    fmt: str,
    outcomes: Sequence[GateOutcome] = (),
    formatters: Optional[Mapping[str, Formatter]] = None,
) -> str:
    """Render ``report`` in format ``fmt`` (a family may add its own formats)."""
    table = dict(_RENDERERS)
    if formatters:
        table.update(formatters)
    return table[fmt](report, outcomes)
