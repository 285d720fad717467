"""Building blocks of the HTML report's chart sections, for the families' ``charts`` modules.

A family's ``charts.section(ctx: Ctx) -> str`` returns the HTML of its charts
(``""`` when its data is absent); the page falls back to :func:`generic`.  The
pieces here escape every string and write every number with its exact JSON text
in a ``data-v`` attribute (see :mod:`rageval_min.report.render_html`).
"""

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .._metrics import Metric, find_metric
from ..gates import GateOutcome
from .model import Report, format_number
from .svg import Bar, Domain, RefLine, bar_chart, esc, exact, is_number

__all__ = [
    "MAX_ROWS",
    "Ctx",
    "Interval",
    "declared_range",
    "figure",
    "generic",
    "intervals_of",
    "metric_num",
    "more",
    "num",
    "pair",
    "status_class",
    "table",
    "tree",
]

Interval = Tuple[Any, Any]

#: Rows of a list shown in a result table before the rest is summarised.
MAX_ROWS = 300


# ---------------------------------------------------------------------------
# small HTML pieces


def num(value: Any) -> str:
    """A value in a table cell: a number rounded for reading (6 significant digits), the exact JSON
    value one hover away (``title``) and in ``data-v``; everything else escaped text."""
    if is_number(value):
        ex = exact(value)
        shown = format_number(value) if isinstance(value, float) else ex
        return f'<span class="n" data-v="{esc(ex)}" title="{esc(ex)}">{esc(shown)}</span>'
    if value is None:
        return '<span class="muted">null</span>'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):  # NaN or infinity (the JSON output has null or the same token)
        return esc(str(value))
    return esc(value)


def metric_num(value: Any) -> str:
    """A gateable metric value (``Report.metrics``, not always in the JSON output): ``data-metric``."""
    if is_number(value):
        ex = exact(value)
        return f'<span class="n" data-metric="{esc(ex)}" title="{esc(ex)}">{esc(ex)}</span>'
    return num(value)


def status_class(passed: Optional[bool]) -> Tuple[str, str]:
    return {True: ("pass", "pass"), False: ("fail", "FAIL"), None: ("skip", "not evaluated")}[passed]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """``rows`` are already HTML."""
    out = [f'<table class="{cls}">' if cls else "<table>", "<tr>"]
    out += [f"<th>{esc(h)}</th>" for h in header]
    out.append("</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "".join(out)


def figure(svg: str, caption: str = "") -> str:
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f"<figure>{svg}{cap}</figure>"


def tree(value: Any, depth: int = 0) -> str:
    """Any JSON value as nested tables."""
    if isinstance(value, Mapping):
        if not value:
            return '<span class="muted">{}</span>'
        cols, rows = value.get("columns"), value.get("rows")
        if isinstance(cols, list) and isinstance(rows, list) and all(isinstance(r, list) for r in rows):
            body = table([str(c) for c in cols], [[tree(c, depth + 1) for c in r] for r in rows[:MAX_ROWS]])
            rest = {k: v for k, v in value.items() if k not in ("columns", "rows")}
            return body + more(len(rows)) + (tree(rest, depth + 1) if rest else "")
        kv = "".join(f"<tr><th><code>{esc(k)}</code></th><td>{tree(v, depth + 1)}</td></tr>" for k, v in value.items())
        return f'<table class="kv">{kv}</table>'
    if isinstance(value, list):
        if not value:
            return '<span class="muted">[]</span>'
        if all(isinstance(v, Mapping) for v in value) and depth < 6:
            keys: List[str] = []
            for v in value[:MAX_ROWS]:
                keys += [k for k in v if k not in keys]
            rows_html = [[tree(v.get(k), depth + 1) if k in v else "" for k in keys] for v in value[:MAX_ROWS]]
            return table(keys, rows_html) + more(len(value))
        if all(not isinstance(v, (Mapping, list)) for v in value):
            shown = ", ".join(num(v) for v in value[:MAX_ROWS])
            return f"[{shown}{', ...' if len(value) > MAX_ROWS else ''}]" + more(len(value))
        return "<ol>" + "".join(f"<li>{tree(v, depth + 1)}</li>" for v in value[:MAX_ROWS]) + "</ol>" + more(len(value))
    return num(value)


def more(n: int) -> str:
    if n <= MAX_ROWS:
        return ""
    return f'<p class="note">showing the first {MAX_ROWS} of {n} entries; the JSON output has them all</p>'


# ---------------------------------------------------------------------------
# intervals and gates


def pair(iv: Any) -> Optional[Interval]:
    if isinstance(iv, Mapping) and is_number(iv.get("low")) and is_number(iv.get("high")):
        return iv["low"], iv["high"]
    if isinstance(iv, (list, tuple)) and len(iv) == 2 and is_number(iv[0]) and is_number(iv[1]):
        return iv[0], iv[1]
    return None


def intervals_of(report: Report) -> Dict[str, Interval]:
    """``{metric: (low, high)}`` from the report (see the module docstring for the sources)."""
    out: Dict[str, Interval] = {}
    result = report.result if isinstance(report.result, Mapping) else {}
    for key, low in result.items():
        if key.endswith("_ci_low"):
            high = result.get(key[: -len("_ci_low")] + "_ci_high")
            if is_number(low) and is_number(high):
                out[key[: -len("_ci_low")]] = (low, high)
    for source in (result.get("intervals"), getattr(report, "intervals", None)):
        if isinstance(source, Mapping):
            for name, iv in source.items():
                found = pair(iv)
                if found is not None:
                    out[str(name)] = found
    return out


class Ctx:
    """What the family sections need: the report, its intervals and gates by metric name."""

    def __init__(self, report: Report, outcomes: Sequence[GateOutcome]) -> None:
        self.report = report
        self.result: Mapping[str, Any] = report.result if isinstance(report.result, Mapping) else {}
        self.intervals = intervals_of(report)
        self.gates: Dict[str, GateOutcome] = {}
        for o in list(report.family_gates) + list(outcomes):
            prev = self.gates.get(o.name)
            if prev is None or (o.passed is False and prev.passed is not False):
                self.gates[o.name] = o

    def bar(self, value: Any, metric: str, series: int = 0, label: str = "", domain: Domain = (None, None)) -> Bar:
        """The bar of ``metric`` with its interval and gate; ``domain``: its declared range."""
        low, high = self.intervals.get(metric, (None, None))
        g = self.gates.get(metric)
        ref = RefLine(g.threshold, g.text, g.passed) if g is not None else None
        return Bar(value if is_number(value) else None, series, low, high, label or metric, ref, domain)


def declared_range(metrics: Iterable[Metric], names: Iterable[str]) -> Domain:
    """The range an axis showing ``names`` is clamped to: the lowest declared ``lo`` and the highest
    declared ``hi`` of their declarations (:class:`rageval_min._metrics.Metric`); a side is None (not
    clamped) when a name is undeclared or open on that side, and both are None for no name.

    >>> ms = (Metric("p", "higher", "rate", "a rate", lo=0.0, hi=1.0),
    ...       Metric("r", "higher", "statistic", "a correlation", lo=-1.0, hi=1.0),
    ...       Metric("n", "neither", "count", "a count"))
    >>> declared_range(ms, ["p"]), declared_range(ms, ["p", "r"]), declared_range(ms, ["p", "n"])
    ((0.0, 1.0), (-1.0, 1.0), (None, None))
    """
    declared = tuple(metrics)
    found = [find_metric(declared, n) for n in names]
    if not found:
        return None, None
    los = [m.lo if m is not None else None for m in found]
    his = [m.hi if m is not None else None for m in found]
    lo = min(x for x in los if x is not None) if all(x is not None for x in los) else None
    hi = max(x for x in his if x is not None) if all(x is not None for x in his) else None
    return lo, hi


def generic(c: Ctx) -> str:
    """Rate-like top-level numbers of the result (0..1 floats), when no family chart applies."""
    names = [k for k, v in c.result.items() if isinstance(v, float) and is_number(v) and 0.0 <= v <= 1.0][:24]
    if not names:
        return ""
    return figure(bar_chart([(n, [c.bar(c.result[n], n)]) for n in names], title="headline rates", ymax=1.0))
