"""The ``junit`` format: JUnit XML, one ``testcase`` per gate (failed gates get a
``failure``, and so does a gate the reference did not evaluate whose own value fails, with the
reference's short-circuit in its message; one that would pass is ``skipped``); with no gates, one passing
``testcase`` named ``evaluation``.
"""

import re
from typing import Sequence

from ..gates import GateOutcome
from .model import SHORT_CIRCUIT, Report, format_number, gate_rows, own_outcome

__all__ = ["escape", "quoteattr", "render_junit"]


def escape(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` for XML text (what ``xml.sax.saxutils.escape`` does).

    Done here so that writing a report does not import ``xml.sax``, which pulls in
    ``urllib`` and more at start-up.

    Characters XML 1.0 cannot hold at all (C0 controls but tab, newline and
    carriage return; lone surrogates; U+FFFE, U+FFFF) are written as the text
    ``\\xNN`` / ``\\uNNNN``, so the document stays well-formed whatever the names.

    >>> escape("a < b & c")
    'a &lt; b &amp; c'
    >>> escape("bell\\x07 and \\ud800")
    'bell\\\\x07 and \\\\ud800'
    """
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _NOT_XML.sub(_visible, text) if _NOT_XML.search(text) else text


#: What XML 1.0 cannot represent (its Char production excludes them).
_NOT_XML = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ud800-\\udfff\\ufffe\\uffff]")


def _visible(m: "re.Match[str]") -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def quoteattr(text: str) -> str:
    """A double-quoted XML attribute value (what ``xml.sax.saxutils.quoteattr`` gives for it).

    >>> quoteattr('x>="1"')
    '"x&gt;=&quot;1&quot;"'
    """
    text = escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return '"' + text.replace('"', "&quot;") + '"'


def render_junit(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    suite = f"rageval-min.{report.family}"
    gates = gate_rows(report, outcomes)
    failures = sum(1 for o in gates if own_outcome(o) is False)
    skipped = sum(1 for o in gates if o.passed is None and own_outcome(o) is not False)
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
        elif o.passed is None and own_outcome(o) is not False:
            out.append(head + ">")
            out.append(f"      <skipped message={quoteattr(SHORT_CIRCUIT + ' (it passes on its own value)')}/>")
            out.append("    </testcase>")
        else:
            msg = f"{o.name} = {format_number(o.value)}, required {o.op} {format_number(o.threshold)}"
            if o.passed is None:
                msg += f" ({SHORT_CIRCUIT})"
            out.append(head + ">")
            out.append(f"      <failure message={quoteattr(msg)}>{escape(msg)}</failure>")
            out.append("    </testcase>")
    if report.diagnostics:
        out.append("    <system-out>" + escape("\n".join(report.diagnostics)) + "</system-out>")
    out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
