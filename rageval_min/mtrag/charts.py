"""The mtrag section of the HTML report (``--format html``): drawn from the report's result."""

from typing import Any, List, Mapping, Sequence

from .._metrics import Metric
from ..report.charts import Ctx, declared_range, figure
from ..report.svg import Bar, bar_chart, is_number
from .conditioning import ConditionAccumulator
from .judge_wrapper import JudgeAccumulator
from .retrieval import MtragRetrievalAccumulator
from .run_algorithmic import AlgorithmicAccumulator
from .summarize import SummarizeAccumulator

__all__ = ["section"]

#: The declared metrics of the steps whose reports hold ``means`` (a name means the same in each).
_MEANS = (
    AlgorithmicAccumulator.METRICS
    + ConditionAccumulator.METRICS
    + JudgeAccumulator.METRICS
    + MtragRetrievalAccumulator.METRICS
)


def _bounded(metrics: Sequence[Metric], name: str) -> bool:
    """Whether ``name`` is declared with both ends of its range."""
    return None not in declared_range(metrics, [name])


def _means(c: Ctx, title: str) -> str:
    """A ``means`` mapping (``counts`` gives each bar's n): rate-like means as bars, the others listed."""
    means = c.result.get("means")
    if not isinstance(means, Mapping):
        return ""
    raw_counts = c.result.get("counts")
    counts: Mapping[str, Any] = raw_counts if isinstance(raw_counts, Mapping) else {}
    rates = [
        k
        for k, v in means.items()
        if isinstance(v, (int, float)) and is_number(v) and (_bounded(_MEANS, k) or 0 <= v <= 1)
    ]
    if not rates:
        return ""
    groups = [(k, [c.bar(means[k], k, 0, f"{k} (n={counts.get(k)})", declared_range(_MEANS, [k]))]) for k in rates]
    others = [k for k in means if k not in rates]
    caption = ("not drawn (not in 0..1): " + ", ".join(others)) if others else ""
    return figure(bar_chart(groups, title=title, ymax=1.0, domain=declared_range(_MEANS, rates)), caption)


def _unit(groups: Mapping[str, Any], metric: str) -> bool:
    """Whether every group's mean of ``metric`` that is a number lies in 0..1."""
    means = [
        g[metric].get("mean") for g in groups.values() if isinstance(g, Mapping) and isinstance(g.get(metric), Mapping)
    ]
    return all(0 <= float(v) <= 1 for v in means if is_number(v))


def _model_chart(setting: Any, model: str, groups: Mapping[str, Any]) -> str:
    """One model's means by answerability group: the metrics with a declared range, or whose means
    all lie in 0..1, as bars (the axis clamped to the declared ranges); the others (a Length) named
    in the caption."""
    metrics: List[str] = []
    for g in groups.values():
        if isinstance(g, Mapping):
            metrics += [m for m in g if m not in metrics]
    drawn = [m for m in metrics if _bounded(SummarizeAccumulator.METRICS, m) or _unit(groups, m)]
    ranges = {m: declared_range(SummarizeAccumulator.METRICS, [m]) for m in drawn}
    bars = []
    for gname, g in groups.items():
        if not isinstance(g, Mapping):
            continue
        row = []
        for i, m in enumerate(drawn):
            cell = g.get(m)
            mean = cell.get("mean") if isinstance(cell, Mapping) else None
            n = cell.get("n") if isinstance(cell, Mapping) else None
            label = f"{gname} {m} (n={n})"
            row.append(Bar(mean if is_number(mean) else None, i, label=label, domain=ranges[m]))
        bars.append((gname, row))
    if not drawn or not bars:
        return ""
    title = f"MT-RAG means by answerability: {model} (setting {setting})"
    domain = declared_range(SummarizeAccumulator.METRICS, drawn)
    others = [m for m in metrics if m not in drawn]
    caption = ("not drawn (not in 0..1): " + ", ".join(others)) if others else ""
    return figure(bar_chart(bars, title=title, series=drawn, ymax=1.0, domain=domain), caption)


def section(c: Ctx) -> str:
    out = []
    settings = c.result.get("settings")
    if not isinstance(settings, list):
        return _means(c, "MT-RAG means over records")
    for s in settings:
        if not isinstance(s, Mapping) or not isinstance(s.get("models"), Mapping):
            continue
        for model, groups in s["models"].items():
            if isinstance(groups, Mapping):
                out.append(_model_chart(s.get("setting", ""), str(model), groups))
    return "".join(out)
