"""The ``--format html`` report: one self-contained page (stdlib only, no network, no framework).

The page holds the verdict, the signature, the gates, family charts drawn as
inline SVG by :mod:`rageval_min.report.svg`, the gateable metrics, the whole
``result`` as tables and the diagnostics.  A Content-Security-Policy forbids
every network load; the only script is a one-line inline marker
(``<html data-rendered="ok">``) that tests use to know the page ran cleanly.
Light and dark colours follow ``prefers-color-scheme``.

Every number taken from the report is written with its exact JSON text
(``json.dumps``: ``repr`` for floats) in a ``data-v`` attribute, and shown
either exactly (tables) or shortened with the exact value in a ``title``
(charts).  Every string is escaped.

Intervals (error bars) come from, in this order of precedence:

* ``report.intervals`` when the report object has that attribute, or
  ``report.result["intervals"]``: ``{METRIC: {"low": x, "high": y}}`` where
  METRIC is a gateable metric name (a key of ``Report.metrics``);
* otherwise pairs ``X_ci_low`` / ``X_ci_high`` at the top of ``result``
  (factuality's bootstrap intervals), giving an interval for ``X``.

A bar whose metric has an interval gets an error bar; others are drawn plain.
See docs/html.md.
"""

from typing import Callable, Optional, Sequence

from ..gates import GateOutcome
from .charts import Ctx, generic, metric_num, num, status_class, table, tree
from .model import Report, gate_status, overall_pass, own_outcome
from .svg import (
    esc,
)

__all__ = ["render_html"]

_CSS = """
:root{--bg:#fff;--fg:#1b1f24;--muted:#636c76;--line:#d0d7de;--card:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;
--skip:#9a6700;--c0:#0969da;--c1:#bf8700;--c2:#8250df;--c3:#1a7f37;--c4:#cf222e;--c5:#1b7c83;--c6:#bc4c00;
--c7:#6e7781}
@media (prefers-color-scheme: dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--card:#161b22;
--pass:#3fb950;--fail:#f85149;--skip:#d29922;--c0:#4493f8;--c1:#e3b341;--c2:#a371f7;--c3:#3fb950;--c4:#f85149;
--c5:#39c5cf;--c6:#f0883e;--c7:#9198a1}}
html{background:var(--bg);color:var(--fg);color-scheme:light dark}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1150px;
padding:16px 24px}
h1{font-size:22px;margin:4px 0 8px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}
h3{font-size:14px;margin:14px 0 6px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.sig{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:6px 8px;overflow-wrap:anywhere}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff;margin-left:8px;
font-size:14px}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}
table{border-collapse:collapse;margin:6px 0 10px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;
vertical-align:top}th{background:var(--card)}table.kv th{font-weight:400}td.n,.n{font-variant-numeric:tabular-nums}
td.pass,.st-pass{color:var(--pass);font-weight:600}td.fail,.st-fail{color:var(--fail);font-weight:600}
td.skip,.st-skip{color:var(--skip)}.muted{color:var(--muted)}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}
figure{margin:8px 0 16px;overflow-x:auto}figcaption{color:var(--muted);font-size:12px}
svg.chart{max-width:100%;height:auto;font-family:inherit}
svg text{fill:var(--fg);font-size:11px}svg .ttl{font-size:13px;font-weight:600}svg .tick{fill:var(--muted);
font-size:10px}
svg .grid{stroke:var(--line);stroke-width:.6}svg .axis{stroke:var(--muted);stroke-width:1}
svg .err{stroke:var(--fg);stroke-width:1.4}svg .gate{stroke-width:2.4;stroke-dasharray:5 3}
svg .halo{stroke:var(--bg);stroke-width:5}
svg circle.dm{fill:var(--fg)}svg .gate-pass .gate,svg circle.gate-pass{stroke:var(--pass);fill:var(--pass)}
svg .gate-fail .gate,svg circle.gate-fail{stroke:var(--fail);fill:var(--fail)}
svg .gate-skip .gate{stroke:var(--skip)}svg .gate-fail text{fill:var(--fail)}svg .gate-pass text{fill:var(--pass)}
svg .val{font-size:10px}
svg .s0{fill:var(--c0)}svg .s1{fill:var(--c1)}svg .s2{fill:var(--c2)}svg .s3{fill:var(--c3)}
svg .s4{fill:var(--c4)}svg .s5{fill:var(--c5)}svg .s6{fill:var(--c6)}svg .s7{fill:var(--c7)}
svg .ln{fill:none;stroke-width:2}svg .l0{stroke:var(--c0)}svg .l1{stroke:var(--c1)}svg .l2{stroke:var(--c2)}
svg .l3{stroke:var(--c3)}svg .l4{stroke:var(--c4)}svg .l5{stroke:var(--c5)}svg .l6{stroke:var(--c6)}
svg .l7{stroke:var(--c7)}
svg .cell{fill:var(--c0)}svg .cell-empty{fill:var(--card)}svg .inbar{fill:#fff;font-weight:600}
ul.diag li{margin:2px 0}.figs{display:flex;flex-wrap:wrap;column-gap:28px}.note{color:var(--muted);font-size:12px}
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; form-action 'none'"

#: The page's only script: it marks the document and logs one line once it has run (tests look for both).
_SCRIPT = "document.documentElement.setAttribute('data-rendered','ok');console.log('rageval-min-html: rendered');"


# ---------------------------------------------------------------------------
# the family section: the charts module the registry names, else the generic one


def _section(c: Ctx) -> Optional[Callable[[Ctx], str]]:
    """The ``section`` of the family's charts module (named in the registry), or None."""
    from .. import registry

    module = registry.charts_module(c.report.family)
    if module is None:
        return None
    drawn: Callable[[Ctx], str] = module.section
    return drawn


def _charts(c: Ctx) -> str:
    section = _section(c)
    html = ""
    if section is not None:
        try:
            html = section(c)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # an unexpected result shape
            html = (
                f'<p class="note">charts unavailable for this result shape ({esc(type(exc).__name__)}: {esc(exc)})</p>'
            )
    return html or generic(c)


# ---------------------------------------------------------------------------
# the page


def _own_gates_source(family: str) -> str:
    """Where a family's own gates come from, as its charts module names it (default: the reference)."""
    from .. import registry

    module = registry.charts_module(family)
    return str(getattr(module, "OWN_GATES", "reference"))


def _gates_html(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    gates = list(report.family_gates) + list(outcomes)
    if not gates:
        return '<p class="muted">no gates</p>'
    rows = []
    n_family = len(list(report.family_gates))
    for i, o in enumerate(gates):
        cls, _ = status_class(own_outcome(o))  # the colour says what the value does; the words add the rest
        text = gate_status(o)
        own = _own_gates_source(report.family)
        source = own if i < n_family else "--gate"
        rows.append(
            [
                f"<code>{esc(o.text)}</code>",
                num(o.value),
                f"{esc(o.op)} {num(o.threshold)}",
                esc(source),
                f'<span class="st-{cls}">{esc(text)}</span>',
            ]
        )
    return table(["gate", "value", "required", "from", "status"], rows)


def _metrics_html(c: Ctx) -> str:
    metrics = c.report.metrics
    if not metrics:
        return ""
    rows = []
    for name, value in metrics.items():
        iv = c.intervals.get(name)
        rows.append([f"<code>{esc(name)}</code>", metric_num(value), (num(iv[0]) + " .. " + num(iv[1])) if iv else ""])
    head = ["metric", "value (unrounded)", "interval"]
    return (
        f"<details{' open' if len(rows) <= 20 else ''}><summary>Gateable metrics ({len(rows)})</summary>"
        + '<p class="note">the names and unrounded values that <code>--gate</code> compares '
        + "(some are not in the JSON output, which holds the reference's own result)</p>"
        + table(head, rows)
        + "</details>"
    )


def render_html(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    """The report as one self-contained HTML page."""
    ok = overall_pass(report, outcomes)
    c = Ctx(report, outcomes)
    verdict = '<span class="badge pass">PASS</span>' if ok else '<span class="badge fail">FAIL</span>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        f"<title>rageval-min {esc(report.family)}: {'PASS' if ok else 'FAIL'}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        f'<body data-family="{esc(report.family)}" data-pass="{"true" if ok else "false"}">',
        f"<h1>rageval-min {esc(report.family)}{verdict}</h1>",
        f'<div class="sig mono" title="signature">{esc(report.signature)}</div>',
        "<h2>Gates</h2>",
        _gates_html(report, outcomes),
    ]
    if report.reference_pass is False and not any(o.passed is False for o in report.family_gates):
        parts.append('<p class="st-fail">the reference\'s own check failed</p>')
    charts = _charts(c)
    if charts:
        parts += ["<h2>Charts</h2>", charts]
    parts.append("<h2>Diagnostics</h2>")
    if report.diagnostics:
        parts.append('<ul class="diag">' + "".join(f"<li>{esc(d)}</li>" for d in report.diagnostics) + "</ul>")
    else:
        parts.append('<p class="muted">none</p>')
    parts += ["<h2>Metrics</h2>", _metrics_html(c) or '<p class="muted">none</p>']
    parts += ["<h2>Result</h2>", "<details open><summary>result (the JSON output's <code>result</code>)</summary>"]
    parts.append(tree(report.result))
    parts.append("</details>")
    parts.append('<p class="note">rageval-min report; self-contained (no network resources)</p>')
    parts.append(f"<script>{_SCRIPT}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
