"""The mtrag section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Any, List, Mapping

from ..report.charts import Ctx, figure
from ..report.svg import Bar, bar_chart, is_number

__all__ = ["section"]


def _means(c: Ctx, title: str) -> str:
    """A ``means`` mapping (``counts`` gives each bar's n): rate-like means as bars, the others listed."""
    means = c.result.get("means")
    if not isinstance(means, Mapping):
        return ""
    raw_counts = c.result.get("counts")
    counts: Mapping[str, Any] = raw_counts if isinstance(raw_counts, Mapping) else {}
    rates = [k for k, v in means.items() if isinstance(v, (int, float)) and is_number(v) and 0 <= v <= 1]
    if not rates:
        return ""
    groups = [(k, [c.bar(means[k], k, 0, f"{k} (n={counts.get(k)})")]) for k in rates]
    others = [k for k in means if k not in rates]
    caption = ("not drawn (not in 0..1): " + ", ".join(others)) if others else ""
    return figure(bar_chart(groups, title=title, ymax=1.0), caption)


def section(c: Ctx) -> str:
    out = []
    settings = c.result.get("settings")
    if not isinstance(settings, list):
        return _means(c, "MT-RAG means over records")
    for s in settings:
        if not isinstance(s, Mapping) or not isinstance(s.get("models"), Mapping):
            continue
        for model, groups in s["models"].items():
            if not isinstance(groups, Mapping):
                continue
            metrics: List[str] = []
            for g in groups.values():
                if isinstance(g, Mapping):
                    metrics += [m for m in g if m not in metrics]
            bars = []
            for gname, g in groups.items():
                if not isinstance(g, Mapping):
                    continue
                row = []
                for i, m in enumerate(metrics):
                    cell = g.get(m)
                    mean = cell.get("mean") if isinstance(cell, Mapping) else None
                    n = cell.get("n") if isinstance(cell, Mapping) else None
                    row.append(Bar(mean if is_number(mean) else None, i, label=f"{gname} {m} (n={n})"))
                bars.append((gname, row))
            title = f"MT-RAG means by answerability: {model} (setting {s.get('setting', '')})"
            out.append(figure(bar_chart(bars, title=title, series=metrics, ymax=1.0)))
    return "".join(out)
